// What one call allows its brain: how long it has to connect and to answer, how big a frame may
// be, how much speech may wait to be played. One object of worker defaults, read when a call
// starts, so a test running the worker in-process can shorten the timeouts instead of sleeping
// through them (and put them back after).
export interface BrainLimits {
  /** TCP connect plus the WebSocket handshake; then the call fails `brain_connect_timeout`. */
  connectTimeoutMs: number;
  /** SessionStart → the greeting; then `greeting_timeout` is logged and the caller may talk. */
  greetingTimeoutMs: number;
  /** UserTurn / UserIdle → the reply's first unit; then `reply_timeout`, likewise. */
  replyTimeoutMs: number;
  /**
   * Nothing at all from the brain (not a frame, not a pong) for this long fails the call
   * `brain_unresponsive` (BRAIN_UNRESPONSIVE_SECONDS; 0 never does). A quiet brain is pinged after
   * a third of it and the page warned after two thirds (liveness.ts). 15 s: a pong takes
   * milliseconds, so this is long past any stall of a live brain, and short against a caller
   * waiting in silence.
   */
  unresponsiveMs: number;
  /**
   * Largest message the brain may send, in bytes. A bigger one is refused from its header, before
   * its payload is read, and the call fails `brain_frame_too_large`. 64 KiB: a unit is a sentence
   * or a few, a Config or EndSession is tiny, and an Action goes on to the page over the data
   * channel, whose messages are 64 KiB when the page does not say otherwise (RFC 8841).
   */
  maxFrameBytes: number;
  /** Units waiting or playing in a call; a unit beyond them is refused (`unit_refused`). */
  maxQueuedUnits: number;
  /** Characters of those units (about 16 a second of espeak speech); likewise. */
  maxQueuedChars: number;
}

export const DEFAULT_BRAIN_LIMITS: Readonly<BrainLimits> = Object.freeze({
  connectTimeoutMs: 5000,
  greetingTimeoutMs: 10_000,
  replyTimeoutMs: 10_000,
  unresponsiveMs: 15_000,
  maxFrameBytes: 64 * 1024,
  maxQueuedUnits: 64,
  maxQueuedChars: 4000,
});

/** The limits calls start with on this process. */
export const brainLimits: BrainLimits = { ...DEFAULT_BRAIN_LIMITS };

/** Runs `fn` with some limits changed, then puts them back (tests). */
export async function withBrainLimits<T>(
  patch: Partial<BrainLimits>,
  fn: () => Promise<T>,
): Promise<T> {
  const before = { ...brainLimits };
  Object.assign(brainLimits, patch);
  try {
    return await fn();
  } finally {
    Object.assign(brainLimits, before);
  }
}
