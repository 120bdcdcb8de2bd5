// `deno task admin <resource> <action> [flags]`: the operator CLI over the admin JSON routes.
// Replies go to stdout as JSON; a refusal's error envelope goes to stderr with exit code 1;
// a usage mistake exits 2 before anything is sent.
import { parseArgs } from "node:util";
import { ApiUnreachable, DEFAULT_API_URL, httpAdminCall } from "./api_client.ts";
import { WEBHOOK_COMMANDS, WEBHOOK_FLAGS } from "./admin_webhooks.ts";
import { RECORDS_COMMANDS, RECORDS_FLAGS } from "./admin_records.ts";

type FlagType = "string" | "boolean" | "strings" | "integer" | "contacts" | "list";

interface Flag {
  type: FlagType;
  /** The body field; defaults to the flag name with dashes as underscores. */
  field?: string;
  /** The value's placeholder in --help. */
  value?: string;
  /** A boolean flag that sends its field as null (--clear-trunk: trunk_id null). */
  sendsNull?: boolean;
}

interface Command {
  route: string;
  summary: string;
  required: string[];
  optional: string[];
}

const FLAGS: Record<string, Flag> = {
  tenant: { type: "string", value: "TENANT" },
  name: { type: "string", value: "NAME" },
  "brain-url": { type: "string", value: "WS_URL" },
  "record-by-default": { type: "boolean" },
  "interruption-sensitivity": { type: "string", value: "low|medium|high" },
  "turn-patience": { type: "string", value: "low|medium|high" },
  "echo-cancellation": { type: "string", value: "auto|on|off" },
  "agent-id": { type: "string", value: "ID" },
  kind: { type: "string", value: "secret|publishable" },
  origin: { type: "strings", field: "allowed_origins", value: "ORIGIN" },
  "key-id": { type: "string", value: "ID" },
  "session-id": { type: "string", value: "ID" },
  status: { type: "string", value: "STATUS" },
  limit: { type: "integer", value: "N" },
  cursor: { type: "string", value: "CURSOR" },
  number: { type: "string", value: "E164" },
  "trunk-id": { type: "string", value: "ID" },
  "clear-trunk": { type: "boolean", field: "trunk_id", sendsNull: true },
  enabled: { type: "boolean" },
  source: { type: "strings", field: "allowed_sources", value: "CIDR" },
  "auth-username": { type: "string", value: "USER" },
  "auth-password": { type: "string", value: "PASSWORD" },
  "auth-realm": { type: "string", value: "REALM" },
  "remove-auth": { type: "boolean" },
  "outbound-address": { type: "string", value: "HOST[:PORT]" },
  "outbound-transport": { type: "string", value: "udp|tcp" },
  "outbound-username": { type: "string", value: "USER" },
  "outbound-password": { type: "string", value: "PASSWORD" },
  "remove-outbound-credentials": { type: "boolean" },
  to: { type: "string", value: "E164" },
  carrier: { type: "string", value: "CARRIER" },
  "campaign-id": { type: "string", value: "ID" },
  from: { type: "string", value: "E164" },
  contacts: { type: "contacts", value: "FILE.json|FILE.csv" },
  concurrency: { type: "integer", value: "N" },
  "starts-at": { type: "string", value: "ISO8601" },
  "window-start": { type: "string", value: "HH:MM" },
  "window-end": { type: "string", value: "HH:MM" },
  "time-zone": { type: "string", value: "IANA_ZONE" },
  "max-attempts": { type: "integer", value: "N" },
  "retry-backoff-seconds": { type: "integer", value: "N" },
  "retry-on": { type: "strings", value: "OUTCOME" },
  "ring-timeout-seconds": { type: "integer", value: "N" },
  "machine-detection": { type: "string", value: "off|hang_up|leave_message" },
  state: { type: "string", value: "STATE" },
  after: { type: "integer", value: "INDEX" },
  "contact-index": { type: "integer", value: "INDEX" },
  ...RECORDS_FLAGS,
  ...WEBHOOK_FLAGS,
};

/**
 * A contacts file: a JSON array of {number, data?, language?, time_zone?}, or a CSV whose header
 * names the columns (number, language and time_zone are the contact's; any other column goes into
 * its data). CSV cells are plain: a quoted cell is refused rather than misread.
 */
export function readContactsFile(path: string): unknown[] {
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch (err) {
    throw new UsageError(`--contacts: cannot read ${path}: ${(err as Error).message}`);
  }
  if (path.endsWith(".json")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new UsageError(`--contacts: ${path} is not valid JSON.`);
    }
    if (!Array.isArray(parsed)) throw new UsageError(`--contacts: ${path} must hold an array.`);
    return parsed;
  }
  const [header, ...rows] = text.split(/\r?\n/).filter((line) => line.trim() !== "");
  if (!header || text.includes('"')) {
    throw new UsageError(`--contacts: ${path} must be a CSV with a header and no quoted cells.`);
  }
  const columns = header.split(",").map((c) => c.trim());
  if (!columns.includes("number")) {
    throw new UsageError(`--contacts: ${path} has no number column.`);
  }
  return rows.map((row) => {
    const cells = row.split(",").map((c) => c.trim());
    const contact: Record<string, unknown> = {};
    const data: Record<string, string> = {};
    columns.forEach((column, i) => {
      if (cells[i] === undefined || cells[i] === "") return;
      if (["number", "language", "time_zone"].includes(column)) contact[column] = cells[i];
      else data[column] = cells[i];
    });
    if (Object.keys(data).length) contact.data = data;
    return contact;
  });
}

const COMMANDS: Record<string, Command> = {
  "agents create": {
    route: "agents.create",
    summary: "create an agent and its first secret key (shown once)",
    required: ["tenant", "name", "brain-url"],
    optional: [
      "record-by-default",
      "interruption-sensitivity",
      "turn-patience",
      "echo-cancellation",
    ],
  },
  "agents list": {
    route: "agents.list",
    summary: "list agents",
    required: [],
    optional: ["tenant"],
  },
  "agents get": { route: "agents.get", summary: "one agent", required: ["agent-id"], optional: [] },
  "agents update": {
    route: "agents.update",
    summary: "change name, brain URL, recording default, turn sensitivity or echo cancellation",
    required: ["agent-id"],
    optional: [
      "name",
      "brain-url",
      "record-by-default",
      "interruption-sensitivity",
      "turn-patience",
      "echo-cancellation",
    ],
  },
  "agents delete": {
    route: "agents.delete",
    summary: "delete an agent and revoke its keys",
    required: ["agent-id"],
    optional: [],
  },
  "keys create": {
    route: "keys.create",
    summary: "new key; --origin (repeatable) for publishable keys",
    required: ["agent-id", "kind"],
    optional: ["origin"],
  },
  "keys list": {
    route: "keys.list",
    summary: "an agent's keys",
    required: ["agent-id"],
    optional: [],
  },
  "keys revoke": {
    route: "keys.revoke",
    summary: "revoke a key",
    required: ["key-id"],
    optional: [],
  },
  "sessions get": {
    route: "sessions.get",
    summary: "a session record",
    required: ["session-id"],
    optional: [],
  },
  "sessions list": {
    route: "sessions.list",
    summary: "sessions, newest first",
    required: [],
    optional: ["agent-id", "status", "limit", "cursor"],
  },
  "trunks create": {
    route: "trunks.create",
    summary: "a SIP trunk: --source (repeatable) CIDRs and/or digest credentials; " +
      "--outbound-address to place calls over it",
    required: ["name"],
    optional: [
      "source",
      "auth-username",
      "auth-password",
      "auth-realm",
      "outbound-address",
      "outbound-transport",
      "outbound-username",
      "outbound-password",
    ],
  },
  "trunks list": { route: "trunks.list", summary: "every trunk", required: [], optional: [] },
  "trunks get": { route: "trunks.get", summary: "one trunk", required: ["trunk-id"], optional: [] },
  "trunks update": {
    route: "trunks.update",
    summary: "change name, sources or credentials (a new username or realm needs the password)",
    required: ["trunk-id"],
    optional: [
      "name",
      "source",
      "auth-username",
      "auth-password",
      "auth-realm",
      "remove-auth",
      "outbound-address",
      "outbound-transport",
      "outbound-username",
      "outbound-password",
      "remove-outbound-credentials",
    ],
  },
  "trunks delete": {
    route: "trunks.delete",
    summary: "delete a trunk no number uses",
    required: ["trunk-id"],
    optional: [],
  },
  "numbers create": {
    route: "numbers.create",
    summary: "point an E.164 number at an agent, optionally behind a trunk",
    required: ["number", "agent-id"],
    optional: ["trunk-id", "enabled"],
  },
  "numbers list": {
    route: "numbers.list",
    summary: "phone numbers",
    required: [],
    optional: ["agent-id", "trunk-id"],
  },
  "numbers get": {
    route: "numbers.get",
    summary: "one number",
    required: ["number"],
    optional: [],
  },
  "numbers update": {
    route: "numbers.update",
    summary: "move a number to another agent or trunk, or turn it off (--no-enabled)",
    required: ["number"],
    optional: ["agent-id", "trunk-id", "clear-trunk", "enabled"],
  },
  "numbers delete": {
    route: "numbers.delete",
    summary: "stop answering a number",
    required: ["number"],
    optional: [],
  },
  "calls dial": {
    route: "calls.dial",
    summary: "call a number now: over --trunk-id (default the --from number's trunk) or --carrier",
    required: ["agent-id", "to", "from"],
    optional: ["trunk-id", "carrier", "ring-timeout-seconds", "machine-detection"],
  },
  "campaigns create": {
    route: "campaigns.create",
    summary: "an outbound campaign: --contacts FILE (JSON array or CSV), default window " +
      "09:00-21:00 Asia/Kolkata, retries no_answer and busy",
    required: ["agent-id", "name", "from", "contacts"],
    optional: [
      "trunk-id",
      "starts-at",
      "concurrency",
      "window-start",
      "window-end",
      "time-zone",
      "max-attempts",
      "retry-backoff-seconds",
      "retry-on",
      "ring-timeout-seconds",
      "machine-detection",
    ],
  },
  "campaigns list": {
    route: "campaigns.list",
    summary: "campaigns with their progress, newest first",
    required: [],
    optional: ["agent-id", "status"],
  },
  "campaigns get": {
    route: "campaigns.get",
    summary: "one campaign and its progress",
    required: ["campaign-id"],
    optional: [],
  },
  "campaigns pause": {
    route: "campaigns.pause",
    summary: "stop placing calls (calls in progress go on)",
    required: ["campaign-id"],
    optional: [],
  },
  "campaigns resume": {
    route: "campaigns.resume",
    summary: "place calls again",
    required: ["campaign-id"],
    optional: [],
  },
  "campaigns cancel": {
    route: "campaigns.cancel",
    summary: "cancel pending contacts (calls in progress go on)",
    required: ["campaign-id"],
    optional: [],
  },
  "campaigns contacts": {
    route: "campaigns.contacts",
    summary: "a page of contacts; --after the previous page's next_after",
    required: ["campaign-id"],
    optional: ["state", "after", "limit"],
  },
  "campaigns attempts": {
    route: "campaigns.attempts",
    summary: "a page of call attempts, optionally of one contact",
    required: ["campaign-id"],
    optional: ["contact-index", "limit"],
  },
  ...RECORDS_COMMANDS,
  ...WEBHOOK_COMMANDS,
};

const flagUsage = (f: string) => FLAGS[f].value ? `--${f} ${FLAGS[f].value}` : `--${f}`;

/** The --help text. */
export function usage(): string {
  const lines = Object.entries(COMMANDS).map(([name, cmd]) => {
    const flags = [
      ...cmd.required.map(flagUsage),
      ...cmd.optional.map((f) => `[${flagUsage(f)}]`),
    ].join(" ");
    return `  ${name} ${flags}\n      ${cmd.summary}`;
  });
  return [
    "Usage: deno task admin <resource> <action> [flags]",
    "",
    "Commands:",
    ...lines,
    "",
    "Connection (flags win over the environment):",
    `  --api-url URL        or API_URL (default ${DEFAULT_API_URL})`,
    "  --admin-token TOKEN  or ADMIN_TOKEN (prefer the environment: flags show in ps)",
    "",
    "--record-by-default may be negated as --no-record-by-default (agents update), --enabled as",
    "--no-enabled (numbers). --auth-password shows in ps like any flag: on a shared host set",
    "trunk passwords through the console or the admin API instead.",
    "Prints the JSON reply on stdout; on refusal prints the error envelope on stderr, exit 1.",
  ].join("\n");
}

export class UsageError extends Error {}

/** What one invocation asks for: the route, its JSON body and where to send it. */
export interface Invocation {
  route: string;
  body: Record<string, unknown>;
  apiUrl: string;
  adminToken: string;
}

/**
 * Parses argv into an invocation, or null for --help. Throws UsageError for anything the
 * API would refuse for a reason the operator can fix from the command line alone.
 */
export function parseInvocation(
  args: string[],
  env: Record<string, string | undefined>,
): Invocation | null {
  const options: Record<string, { type: "string" | "boolean"; multiple?: boolean }> = {
    help: { type: "boolean" },
    "api-url": { type: "string" },
    "admin-token": { type: "string" },
  };
  for (const [name, flag] of Object.entries(FLAGS)) {
    options[name] = flag.type === "boolean"
      ? { type: "boolean" }
      : { type: "string", multiple: flag.type === "strings" };
  }
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options,
      allowPositionals: true,
      allowNegative: true,
      strict: true,
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help || positionals.length === 0) return null;
  const name = positionals.join(" ");
  const cmd = COMMANDS[name];
  if (!cmd) throw new UsageError(`Unknown command "${name}".`);

  const allowed = new Set([...cmd.required, ...cmd.optional]);
  for (const f of Object.keys(FLAGS)) {
    if (values[f] !== undefined && !allowed.has(f)) {
      throw new UsageError(`"${name}" takes no --${f}.`);
    }
  }
  if (values["clear-trunk"] && values["trunk-id"] !== undefined) {
    throw new UsageError("--clear-trunk and --trunk-id contradict each other.");
  }
  const missing = cmd.required.filter((f) => values[f] === undefined);
  if (missing.length) {
    throw new UsageError(`"${name}" needs ${missing.map((f) => `--${f}`).join(", ")}.`);
  }

  const body: Record<string, unknown> = {};
  for (const f of allowed) {
    const value = values[f];
    if (value === undefined) continue;
    const flag = FLAGS[f];
    const field = flag.field ?? f.replaceAll("-", "_");
    if (flag.sendsNull) {
      if (value === true) body[field] = null;
    } else if (flag.type === "contacts") {
      body[field] = readContactsFile(value as string);
    } else if (flag.type === "list") {
      const v = (value as string).trim();
      body[field] = v === "none" || v === "" ? [] : v.split(",").map((x) => x.trim());
    } else if (flag.type === "integer") {
      const n = Number(value);
      if (!Number.isInteger(n)) throw new UsageError(`--${f} must be an integer.`);
      body[field] = n;
    } else {
      body[field] = value;
    }
  }

  const adminToken = (values["admin-token"] as string | undefined) || env.ADMIN_TOKEN;
  if (!adminToken) throw new UsageError("Set ADMIN_TOKEN (or pass --admin-token).");
  const apiUrl = (values["api-url"] as string | undefined) || env.API_URL || DEFAULT_API_URL;
  return { route: cmd.route, body, apiUrl, adminToken };
}

/** Runs the CLI; returns the process exit code. */
export async function main(args: string[], env = Deno.env.toObject()): Promise<number> {
  let inv: Invocation | null;
  try {
    inv = parseInvocation(args, env);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`${err.message}\n\n${usage()}`);
    return 2;
  }
  if (!inv) {
    console.log(usage());
    return 0;
  }
  try {
    const reply = await httpAdminCall(inv.apiUrl, inv.adminToken)(`/api/v1/${inv.route}`, inv.body);
    const text = typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body, null, 2);
    if (reply.status >= 200 && reply.status < 300) {
      console.log(text);
      return 0;
    }
    console.error(text);
    return 1;
  } catch (err) {
    if (!(err instanceof ApiUnreachable)) throw err;
    console.error(err.message);
    return 1;
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
