// The turn-taking bench's figures from what the pipeline did and the key. A false cut-off: a user
// turn sent before the key's true end of the turn (the caller was only pausing). The wait: from
// the true end to the first user turn sent at or after it (audio time). A backchannel said over
// the bot that interrupts it is wrongly taken as a barge-in; a barge-in that does not is missed.
import { mean, percentile } from "../harness/stats.ts";
import type { TurnKey } from "./data.ts";
import type { Outcome } from "./run.ts";

export interface TurnResult {
  /** Sent a turn before the true end. */
  cut: boolean;
  /** True end → the turn sent after it, ms; undefined when none came. */
  waitMs?: number;
}

export function judgeTurn(key: TurnKey, outcome: Outcome): TurnResult {
  const cut = outcome.turns.some((t) => t.atMs < key.endMs);
  const after = outcome.turns.find((t) => t.atMs >= key.endMs);
  return { cut, waitMs: after === undefined ? undefined : after.atMs - key.endMs };
}

/** Interrupted the bot at or after the clip's speech began. */
export function interrupted(key: TurnKey, outcome: Outcome): boolean {
  return outcome.interrupts.some((at) => at >= key.segments[0].startMs);
}

export interface Summary {
  turns: number;
  /** Turns with a pause inside (the only ones that can be cut). */
  paused: number;
  cut: number;
  /** cut / turns. */
  cutRate: number;
  /** Turns never sent after their end (missed by the pipeline). */
  missed: number;
  meanWaitMs: number;
  p50WaitMs: number;
  p99WaitMs: number;
}

export function summarise(rows: { key: TurnKey; result: TurnResult }[]): Summary {
  const waits = rows.flatMap((r) => r.result.waitMs === undefined ? [] : [r.result.waitMs]);
  const cut = rows.filter((r) => r.result.cut).length;
  return {
    turns: rows.length,
    paused: rows.filter((r) => r.key.pausesMs.length > 0).length,
    cut,
    cutRate: rows.length ? cut / rows.length : NaN,
    missed: rows.length - waits.length,
    meanWaitMs: mean(waits),
    p50WaitMs: percentile(waits, 50),
    p99WaitMs: percentile(waits, 99),
  };
}

/** The cut-off rate by the pause inside the turn (ms → rate), for the curve's detail. */
export function cutByPause(
  rows: { key: TurnKey; result: TurnResult }[],
): Record<string, { n: number; cut: number }> {
  const by: Record<string, { n: number; cut: number }> = {};
  for (const r of rows) {
    const p = String(r.key.pausesMs[0] ?? 0);
    by[p] ??= { n: 0, cut: 0 };
    by[p].n++;
    if (r.result.cut) by[p].cut++;
  }
  return by;
}
