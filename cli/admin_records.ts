// `deno task admin redaction ...` and `storage ...`: what is kept of an agent's calls (issue 37),
// the operator CLI's commands (cli/admin.ts) over agents.redaction.* and storage.*.

export const RECORDS_FLAGS = {
  bucket: { type: "string", value: "BUCKET" },
  prefix: { type: "string", value: "PREFIX" },
  region: { type: "string", value: "REGION" },
  endpoint: { type: "string", value: "URL" },
  "access-key-id": { type: "string", value: "ID" },
  "secret-access-key": { type: "string", value: "SECRET" },
  "retention-days": { type: "integer", value: "DAYS" },
  "remove-bucket": { type: "boolean" },
  // A comma-separated list; `none` is the empty list (redaction off).
  categories: { type: "list", value: "CATEGORY,...|none" },
} as const;

export const RECORDS_COMMANDS = {
  "redaction get": {
    route: "agents.redaction.get",
    summary: "the categories an agent's calls are redacted of (docs/redaction.md)",
    required: ["agent-id"],
    optional: [],
  },
  "redaction set": {
    route: "agents.redaction.set",
    summary: "redact card,account,phone,email,aadhaar,pan,keypad (or none) from its calls",
    required: ["agent-id", "categories"],
    optional: [],
  },
  "storage set": {
    route: "storage.set",
    summary: "an agent's S3-compatible bucket (secret sealed, never shown) and retention in days",
    required: ["agent-id"],
    optional: [
      "bucket",
      "prefix",
      "region",
      "endpoint",
      "access-key-id",
      "secret-access-key",
      "retention-days",
      "remove-bucket",
    ],
  },
  "storage get": {
    route: "storage.get",
    summary: "an agent's storage",
    required: ["agent-id"],
    optional: [],
  },
  "storage remove": {
    route: "storage.remove",
    summary: "no bucket, no retention for the agent",
    required: ["agent-id"],
    optional: [],
  },
};
