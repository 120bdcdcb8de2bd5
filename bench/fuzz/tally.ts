// What one surface's fuzz run saw: inputs, answers by status and code, and every property
// violation (a 5xx, a crash, an unhandled rejection, a refusal outside the envelope, a write on
// refusal, memory), with a few samples of each so a failure can be reproduced.

export interface Memory {
  /** Which process was measured (the worker, or this process). */
  process: string;
  beforeBytes: number;
  afterBytes: number;
  /** After the run's leftovers (calls waiting for their connect timeout) have ended. */
  settledBytes?: number;
}

export class Tally {
  inputs = 0;
  /** "<status> <code>" or a surface's own outcome name → count. */
  readonly outcomes = new Map<string, number>();
  fiveXX = 0;
  unhandled = 0;
  crashes = 0;
  /** Property violations other than the three above: name → count. */
  readonly violations = new Map<string, number>();
  readonly samples: string[] = [];
  readonly findings: { kind: string; detail: string }[] = [];
  readonly memory: Memory[] = [];
  /** Free-form figures a surface reports (e.g. "log entries the database would refuse"). */
  readonly figures = new Map<string, number | string>();
  private started = performance.now();
  wallMs = 0;

  constructor(readonly surface: string) {}

  outcome(tag: string, n = 1): void {
    this.outcomes.set(tag, (this.outcomes.get(tag) ?? 0) + n);
  }

  figure(name: string, value: number | string): void {
    this.figures.set(name, value);
  }

  add(name: string, n = 1): void {
    const v = this.figures.get(name);
    this.figures.set(name, (typeof v === "number" ? v : 0) + n);
  }

  /** A property failed for `input`. `kind` is "5xx", "crash", "unhandled" or a violation name. */
  fail(kind: string, detail: string): void {
    if (kind === "5xx") this.fiveXX++;
    else if (kind === "crash") this.crashes++;
    else if (kind === "unhandled") this.unhandled++;
    else this.violations.set(kind, (this.violations.get(kind) ?? 0) + 1);
    if (this.samples.length < 12) this.samples.push(`${kind}: ${detail.slice(0, 600)}`);
    // Whole reproducers go to a file (test-artifacts/ is not committed).
    if (this.findings.length < 200) this.findings.push({ kind, detail });
  }

  finish(): void {
    this.wallMs = performance.now() - this.started;
  }

  /** Writes every finding, in full, to `dir`/<surface>.json; returns the path (none: undefined). */
  async saveFindings(dir = "test-artifacts/fuzz"): Promise<string | undefined> {
    if (!this.findings.length) return undefined;
    await Deno.mkdir(dir, { recursive: true });
    const path = `${dir}/${this.surface.split(" ")[0]}.json`;
    await Deno.writeTextFile(path, JSON.stringify(this.findings, null, 2));
    return path;
  }

  get failed(): boolean {
    return this.fiveXX > 0 || this.crashes > 0 || this.unhandled > 0 || this.violations.size > 0;
  }

  refusals(): [string, number][] {
    return [...this.outcomes].filter(([k, n]) => n > 0 && !/^(2\d\d|ok|accepted)\b/.test(k))
      .sort((a, b) => b[1] - a[1]);
  }
}

const mb = (b: number) => `${(b / 1e6).toFixed(1)} MB`;

export function formatTally(t: Tally): string {
  const lines = [`── ${t.surface}`];
  lines.push(`  inputs            ${t.inputs.toLocaleString("en-US")}`);
  lines.push(`  wall time         ${(t.wallMs / 1000).toFixed(1)} s`);
  const accepted = [...t.outcomes].filter(([k]) => /^(2\d\d|ok|accepted)\b/.test(k));
  if (accepted.length) {
    lines.push(`  accepted          ${accepted.map(([k, n]) => `${k}: ${n}`).join(", ")}`);
  }
  const refusals = t.refusals();
  lines.push(`  refusals by code  ${refusals.length ? "" : "none"}`);
  for (const [k, n] of refusals) lines.push(`    ${String(n).padStart(7)}  ${k}`);
  lines.push(`  5xx               ${t.fiveXX}`);
  lines.push(`  unhandled rej.    ${t.unhandled}`);
  lines.push(`  crashes           ${t.crashes}`);
  for (const [k, n] of t.violations) lines.push(`  VIOLATION ${k}: ${n}`);
  for (const m of t.memory) {
    const settled = m.settledBytes === undefined ? "" : `, settled ${mb(m.settledBytes)}`;
    lines.push(
      `  RSS (${m.process})  before ${mb(m.beforeBytes)}, after ${mb(m.afterBytes)}${settled}`,
    );
  }
  for (const [k, v] of t.figures) lines.push(`  ${k}: ${v}`);
  for (const s of t.samples) lines.push(`  sample ${s}`);
  return lines.join("\n");
}
