// When a failed delivery is tried again: exponential backoff with full jitter (a uniformly random
// wait between 0 and min(cap, base·2^attempt)), so receivers coming back after an outage are not
// hit by every sender at once, until an attempt fails `giveUpAfterMs` after the delivery was
// queued (24 h by default; then it is marked failed and can still be redelivered by hand).

export interface RetryPolicy {
  baseMs: number;
  capMs: number;
  giveUpAfterMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  baseMs: 5_000,
  capMs: 30 * 60_000,
  giveUpAfterMs: 24 * 60 * 60_000,
};

/** The upper bound of the wait after the `attempts`-th failed attempt (1 = the first). */
export function backoffCeilingMs(attempts: number, p: RetryPolicy = DEFAULT_RETRY): number {
  return Math.min(p.capMs, p.baseMs * 2 ** Math.min(Math.max(attempts - 1, 0), 30));
}

/**
 * After a failed attempt at `nowMs`: the instant of the next one, or undefined to give up.
 * `random` is in [0, 1) (Math.random in the service; fixed in tests).
 */
export function nextAttemptAt(
  attempts: number,
  retryFromMs: number,
  nowMs: number,
  p: RetryPolicy = DEFAULT_RETRY,
  random: () => number = Math.random,
): number | undefined {
  if (nowMs - retryFromMs >= p.giveUpAfterMs) return undefined;
  return nowMs + Math.floor(random() * backoffCeilingMs(attempts, p));
}
