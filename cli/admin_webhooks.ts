// `deno task admin webhooks ...`: the webhook commands of the operator CLI (cli/admin.ts), over
// the webhooks.* admin routes.

export const WEBHOOK_FLAGS = {
  url: { type: "string", value: "URL" },
  description: { type: "string", value: "TEXT" },
  event: { type: "strings", field: "event_types", value: "TYPE" },
  "endpoint-id": { type: "string", value: "ID" },
  "delivery-id": { type: "string", value: "ID" },
} as const;

export const WEBHOOK_COMMANDS = {
  "webhooks create": {
    route: "webhooks.create",
    summary: "an endpoint for --agent-id or --tenant; --event (repeatable) filters; " +
      "prints its signing secret once",
    required: ["url"],
    optional: ["agent-id", "tenant", "description", "event"],
  },
  "webhooks list": {
    route: "webhooks.list",
    summary: "endpoints (never their secrets)",
    required: [],
    optional: ["agent-id", "tenant"],
  },
  "webhooks update": {
    route: "webhooks.update",
    summary: "change URL, description, events, or turn it off (--no-enabled) and on",
    required: ["endpoint-id"],
    optional: ["url", "description", "event", "enabled"],
  },
  "webhooks delete": {
    route: "webhooks.delete",
    summary: "delete an endpoint (what it was owed is given up; its log stays)",
    required: ["endpoint-id"],
    optional: [],
  },
  "webhooks deliveries": {
    route: "webhooks.deliveries",
    summary: "an endpoint's delivery log, newest first",
    required: ["endpoint-id"],
    optional: ["session-id", "status", "limit"],
  },
  "webhooks attempts": {
    route: "webhooks.attempts",
    summary: "every request of one delivery: time, code, latency, error",
    required: ["delivery-id"],
    optional: [],
  },
  "webhooks redeliver": {
    route: "webhooks.redeliver",
    summary: "send a delivery again now (same webhook-id)",
    required: ["delivery-id"],
    optional: [],
  },
};
