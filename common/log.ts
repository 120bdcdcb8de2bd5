// One line per event, `key=value` pairs after the message, so logs grep well by session id.
// Never pass keys or tokens here: callers log ids and prefixes only.
export type Fields = Record<string, string | number | boolean | null | undefined>;

function render(fields: Fields): string {
  return Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => {
      const s = String(v);
      return /[\s="]/.test(s) ? `${k}=${JSON.stringify(s)}` : `${k}=${s}`;
    })
    .join(" ");
}

let quiet = false;
/** Tests and benchmarks silence the per-request lines. */
export function setQuiet(value: boolean) {
  quiet = value;
}

function line(level: string, component: string, msg: string, fields: Fields) {
  if (quiet && level !== "error") return;
  const rest = render(fields);
  const text = `${new Date().toISOString()} ${level} [${component}] ${msg}${
    rest ? " " + rest : ""
  }`;
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
