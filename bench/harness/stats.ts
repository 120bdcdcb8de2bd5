// Figures over samples, one definition for every bench. Percentiles are nearest rank, the
// caller simulator's own (caller/turn_latency.ts), so a bench's p50/p99 and `deno task call`'s
// agree: the value at rank ceil(p/100 · n) of the sorted samples.
import { percentile } from "../../caller/turn_latency.ts";

export { percentile };

/** The median by nearest rank (the lower middle of an even count); NaN when empty. */
export const median = (xs: readonly number[]): number => percentile(xs, 50);

export const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);

/** NaN when empty. */
export const mean = (xs: readonly number[]): number => sum(xs) / xs.length;

/** Least-squares slope of ys over xs; NaN with fewer than two points. */
export function slope(xs: readonly number[], ys: readonly number[]): number {
  const n = xs.length;
  if (n < 2) return NaN;
  const mx = mean(xs), my = mean(ys);
  let num = 0, den = 0;
  for (let i = 0; i < n; i++) (num += (xs[i] - mx) * (ys[i] - my), den += (xs[i] - mx) ** 2);
  return num / den;
}
