// One line per event. Text (the default): `time level [component] message key=value ...`, so logs
// grep well by session id. JSON (`setLogFormat("json")`, LOG_FORMAT=json): one object a line,
// `{time, level, component, msg, ...fields}`, for log collectors that index fields.
// Never pass keys or tokens here: callers log ids and prefixes only.
export type Fields = Record<string, string | number | boolean | null | undefined>;

export type LogFormat = "text" | "json";

function render(fields: Fields): string {
  return Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => {
      const s = String(v);
      return /[\s="]/.test(s) ? `${k}=${JSON.stringify(s)}` : `${k}=${s}`;
    })
    .join(" ");
}

const CORE = new Set(["time", "level", "component", "msg"]);

/**
 * The JSON line: the four fixed keys first, then the fields as given (undefined ones left out).
 * A field named like a fixed key is kept as `field_<name>` rather than overwriting it.
 */
function renderJson(time: string, level: string, component: string, msg: string, fields: Fields) {
  const out: Record<string, unknown> = { time, level, component, msg };
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined) continue;
    out[CORE.has(k) ? `field_${k}` : k] = typeof v === "number" && !Number.isFinite(v)
      ? String(v) // JSON has no NaN or Infinity
      : v;
  }
  return JSON.stringify(out);
}

let quiet = false;
/** Tests and benchmarks silence the per-request lines. */
export function setQuiet(value: boolean) {
  quiet = value;
}

let format: LogFormat = "text";
/** `text` (the default) or `json`; the main files set it from LOG_FORMAT. */
export function setLogFormat(value: LogFormat) {
  if (value !== "text" && value !== "json") throw new Error("the log format is text or json");
  format = value;
}

function line(level: string, component: string, msg: string, fields: Fields) {
  if (quiet && level !== "error") return;
  const time = new Date().toISOString();
  let text: string;
  if (format === "json") {
    text = renderJson(time, level, component, msg, fields);
  } else {
    const rest = render(fields);
    text = `${time} ${level} [${component}] ${msg}${rest ? " " + rest : ""}`;
  }
  if (level === "error") console.error(text);
  else console.log(text);
}

export interface Logger {
  info(msg: string, fields?: Fields): void;
  warn(msg: string, fields?: Fields): void;
  error(msg: string, fields?: Fields): void;
}

export function logger(component: string): Logger {
  return {
    info: (m, f = {}) => line("info", component, m, f),
    warn: (m, f = {}) => line("warn", component, m, f),
    error: (m, f = {}) => line("error", component, m, f),
  };
}
