// Reading session log entries for display: a chat frame is stored as the JSON text the page sent
// or was sent, and a brain frame carries JSON text in its `json` and `init_json` fields
// (docs/session-record.md), so these are parsed here and shown as the values they are, not as
// strings of escaped JSON; every row's one-line summary says something, a frame whose text is
// empty included (a brain's closing `last` unit carries no text).

/** An entry's data as the console shows it, and whether JSON text in it was parsed. */
export interface LogData {
  value: unknown;
  /** The data, or a `json`/`init_json` field of it, was JSON text, shown parsed. */
  parsedJson: boolean;
}

/** Frame fields that hold JSON text (brain.proto: ClientMessage, Action, SessionStart). */
const JSON_FIELDS = ["json", "init_json"];

/** Fields every wire frame carries, left out of one-line summaries. */
const PLUMBING = new Set(["seq", "timestamp_ms"]);

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** `text` parsed when it is an object or array in JSON; undefined otherwise. */
function parsed(text: unknown): { value: unknown } | undefined {
  if (typeof text !== "string" || !/^\s*[[{]/.test(text)) return undefined;
  try {
    return { value: JSON.parse(text) };
  } catch {
    return undefined; // not JSON after all: shown as the text it is
  }
}

/** The stored data with JSON text (a chat frame, a frame's json fields) parsed. */
export function readLogData(data: unknown): LogData {
  const whole = parsed(data);
  if (whole) return { value: whole.value, parsedJson: true };
  if (!isObject(data)) return { value: data, parsedJson: false };
  let parsedJson = false;
  const value = { ...data };
  for (const k of JSON_FIELDS) {
    const p = parsed(value[k]);
    if (p) [value[k], parsedJson] = [p.value, true];
  }
  return { value, parsedJson };
}

function clip(s: string, max: number): string {
  return s.length > max ? s.slice(0, max - 1) + "…" : s;
}

function json(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** `key=value` for each field but the plumbing and `skip`, values as compact JSON. */
function fields(o: Record<string, unknown>, skip: string[] = []): string {
  return Object.entries(o)
    .filter(([k]) => !PLUMBING.has(k) && !skip.includes(k))
    .map(([k, v]) => `${k}=${typeof v === "string" ? v : json(v)}`)
    .join(" ");
}

/**
 * One short line for a table cell: an RTVI message as its type and what it carries, anything
 * with text as the text, text that is empty as "(no text)" and the other fields, else compact
 * JSON. Never empty.
 */
export function summary(value: unknown, max = 96): string {
  if (isObject(value)) {
    if (value.label === "rtvi-ai" && typeof value.type === "string") {
      const inner = value.data === undefined ? "" : `: ${summary(value.data, max)}`;
      return clip(value.type + inner, max);
    }
    if (typeof value.text === "string") {
      if (value.text.trim() !== "") return clip(value.text, max);
      const rest = fields(value, ["text"]);
      return clip(`(no text)${rest ? " " + rest : ""}`, max);
    }
    const rest = fields(value);
    if (rest) return clip(rest, max);
  }
  if (typeof value === "string") return value === "" ? "(empty)" : clip(value, max);
  return clip(json(value), max);
}
