// What the brain answered differently in a replay, exchange by exchange, in the four things a
// brain decides: the units it speaks, the actions it sends the page, config changes, the end.
import { type Answer, type CallerEvent, describeEvent } from "./recording.ts";

export interface ExchangeDiff {
  /** 0: the greeting; i: after the recording's events[i - 1]. */
  exchange: number;
  what: string;
  lines: string[];
}

const show = (xs: string[]) => xs.length === 0 ? "(none)" : xs.join(" | ");

function aspects(answers: Answer[]): Record<string, string[]> {
  const out: Record<string, string[]> = { units: [], actions: [], config: [], end: [] };
  for (const a of answers) {
    if (a.kind === "unit") out.units.push(JSON.stringify(a.text));
    else if (a.kind === "action") out.actions.push(`${a.type} ${JSON.stringify(a.data)}`);
    else if (a.kind === "config") out.config.push(JSON.stringify(a.config));
    else out.end.push(JSON.stringify(a.reason));
  }
  return out;
}

/** The exchanges whose answers differ; `sent` of the events were replayed. */
export function diffExchanges(
  events: CallerEvent[],
  recorded: Answer[][],
  replayed: Answer[][],
  sent: number,
): ExchangeDiff[] {
  const out: ExchangeDiff[] = [];
  for (let i = 0; i < recorded.length; i++) {
    const what = describeEvent(i === 0 ? null : events[i - 1]);
    if (i > sent) {
      out.push({ exchange: i, what, lines: ["not replayed: the brain had ended the session"] });
      break;
    }
    const r = aspects(recorded[i]), p = aspects(replayed[i] ?? []);
    const lines: string[] = [];
    for (const k of Object.keys(r)) {
      if (JSON.stringify(r[k]) === JSON.stringify(p[k])) continue;
      lines.push(
        `${k.padEnd(7)} recorded: ${show(r[k])}`,
        `${"".padEnd(7)} replayed: ${show(p[k])}`,
      );
    }
    if (lines.length) out.push({ exchange: i, what, lines });
  }
  return out;
}

/** The report: one block per differing exchange, then a summary line. */
export function formatDiff(diffs: ExchangeDiff[], exchanges: number): string[] {
  const out: string[] = [];
  for (const d of diffs) {
    out.push(`after ${d.what}:`);
    for (const l of d.lines) out.push(`  ${l}`);
  }
  out.push(
    diffs.length === 0
      ? `same answers in all ${exchanges} exchanges`
      : `${diffs.length} of ${exchanges} exchanges answered differently`,
  );
  return out;
}
