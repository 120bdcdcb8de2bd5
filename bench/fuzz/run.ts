// Drawing inputs from a fast-check arbitrary in batches (a 100,000-input run never holds them
// all), and running them with bounded concurrency.
import fc from "fast-check";

export const BATCH = 200;

/** `runs` values of `arb` in batches of BATCH, reproducible from `seed`. */
export function* batches<T>(arb: fc.Arbitrary<T>, runs: number, seed: number): Generator<T[]> {
  for (let done = 0, i = 0; done < runs; i++) {
    const n = Math.min(BATCH, runs - done);
    yield fc.sample(arb, { numRuns: n, seed: seed + i });
    done += n;
  }
}

/**
 * Runs `fn` over `items`, at most `concurrency` at a time. A throw from `fn` is the fuzzer's own
 * failure, not the target's: it is handed to `onError` and the run goes on.
 */
export async function pool<T>(
  items: T[],
  concurrency: number,
  fn: (item: T) => Promise<void>,
  onError: (err: unknown, item: T) => void = (err) => {
    throw err;
  },
): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++];
      try {
        await fn(item);
      } catch (err) {
        onError(err, item);
      }
    }
  });
  await Promise.all(lanes);
}
