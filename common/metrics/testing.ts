// Reading Prometheus text in tests: the value of one series, by name and labels.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const m = LINE.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, k, v] of (m[2] ?? "").matchAll(LABEL)) {
      labels[k] = v.replace(/\\(.)/g, (_, c) => (c === "n" ? "\n" : c));
    }
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return samples;
}

/** The value of the series `name` whose labels include `labels`; undefined when none. */
export function sample(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  return parseMetrics(text).find((s) =>
    s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)
  )?.value;
}

/** `# HELP name ...` and `# TYPE name type` are both present. */
export function described(text: string, name: string, type: string): boolean {
  return text.includes(`# HELP ${name} `) && text.includes(`# TYPE ${name} ${type}\n`);
}
