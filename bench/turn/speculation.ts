// --speculation: what speculative turns (Config.turns.speculative) cost the brain and gain the
// caller, over the bench's own turns. Each pause whose words go before the window closes is one
// brain call; a caller who goes on drops it (a call whose reply nobody hears). Two settings over
// the same clips: as shipped (words that hang go halfway through their 2 s window) and "at the
// pause" (every pause's words go at once, as the first speculative turns did).
import type { Outcome, Setting } from "./run.ts";
import { markdownTable } from "../harness/table.ts";
import { median } from "../harness/stats.ts";

export const SPECULATION_SETTINGS: [string, Setting][] = [
  ["speculative", { mode: "adaptive", speculative: true }],
  [
    "speculative at the pause",
    { mode: "adaptive", speculative: true, rules: { hangingSpeculation: 0 } },
  ],
];

/** One language, band and setting, over its turn clips. */
export interface SpeculationTally {
  turns: number;
  /** Speculative turns sent, dropped (the caller went on), and confirmed. */
  sent: number;
  dropped: number;
  confirmed: number;
  /** Confirmed ones: ms from the speculative send to the confirmation (the reply's head start). */
  headStartMs: number[];
}

export const emptyTally = (): SpeculationTally => ({
  turns: 0,
  sent: 0,
  dropped: 0,
  confirmed: 0,
  headStartMs: [],
});

export function tallySpeculation(t: SpeculationTally, o: Outcome): void {
  t.turns++;
  for (const s of o.speculated) {
    t.sent++;
    if (s.outcome === "dropped") t.dropped++;
    if (s.outcome === "confirmed") {
      t.confirmed++;
      t.headStartMs.push(s.confirmedAtMs! - s.atMs);
    }
  }
}

/**
 * The table: per language and band, each setting's brain calls per turn and head start. A turn
 * the policy cut off mid-sentence is confirmed twice (its first part, then the rest), so
 * confirmed per turn can pass 1.
 */
export function speculationTable(
  rows: { language: string; band: string; setting: string; tally: SpeculationTally }[],
): string {
  const per = (n: number, d: number) => d ? (n / d).toFixed(2) : "–";
  return markdownTable([
    [
      "language",
      "band",
      "setting",
      "brain calls / turn",
      "dropped / turn",
      "confirmed / turn",
      "head start p50 ms",
    ],
    ...rows.map(({ language, band, setting, tally: t }) => {
      const headStart = median(t.headStartMs);
      return [
        language,
        band,
        setting,
        per(t.sent, t.turns),
        per(t.dropped, t.turns),
        per(t.confirmed, t.turns),
        Number.isFinite(headStart) ? String(Math.round(headStart)) : "–",
      ];
    }),
  ]);
}
