// Idle as its own small stage (Pipecat's IdleFrameProcessor): once the call is quiet (nobody
// speaks, nothing plays, no reply awaited), a timer runs for the idle timeout; activity restarts
// it, and the call ceasing to be quiet stops it. No poll: the call says when something happened
// (activity) or when the floor may have changed hands (check).
/** The timer the stage runs on (tests give a clock of their own). */
export interface IdleClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(id: unknown): void;
}

const REAL_CLOCK: IdleClock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (id) => clearTimeout(id as ReturnType<typeof setTimeout>),
};

export class IdleStage {
  #timeoutMs = 0;
  #timer?: unknown;
  /** When the quiet being timed began. */
  #since = 0;
  #stopped = false;

  constructor(
    private quiet: () => boolean,
    /** idleMs: how long the call has been quiet. */
    private onIdle: (idleMs: number) => void,
    private clock: IdleClock = REAL_CLOCK,
  ) {}

  /** The idle timeout, ms (0 or less: never). A change keeps the quiet already timed. */
  set timeoutMs(ms: number) {
    this.#timeoutMs = ms;
    if (this.#timer !== undefined) this.#arm();
    else this.check();
  }

  get timeoutMs(): number {
    return this.#timeoutMs;
  }

  /** How long the call has been quiet (as of the quiet being timed). */
  get quietMs(): number {
    return Math.round(this.clock.now() - this.#since);
  }

  /** Something happened (speech, a unit, the bot falling silent): the quiet starts over. */
  activity(): void {
    this.#clear();
    this.check();
  }

  /** The call's state may have changed: time the quiet if it began, stop if it ended. */
  check(): void {
    if (this.#stopped) return;
    if (this.#timeoutMs <= 0 || !this.quiet()) return this.#clear();
    if (this.#timer !== undefined) return;
    this.#since = this.clock.now();
    this.#arm();
  }

  stop(): void {
    this.#stopped = true;
    this.#clear();
  }

  #arm(): void {
    this.clock.clearTimeout(this.#timer);
    if (this.#timeoutMs <= 0) return this.#clear();
    const left = Math.max(0, this.#since + this.#timeoutMs - this.clock.now());
    this.#timer = this.clock.setTimeout(() => this.#fire(), left);
  }

  #fire(): void {
    this.#timer = undefined;
    if (this.#stopped || !this.quiet()) return;
    // A timer may fire a fraction of a millisecond early (seen in CI: UserIdle with idle_ms 1499
    // for a timeout of 1500): the quiet must have lasted the whole timeout before it is reported.
    const left = this.#since + this.#timeoutMs - this.clock.now();
    if (left > 0) {
      this.#timer = this.clock.setTimeout(() => this.#fire(), Math.max(1, Math.ceil(left)));
      return;
    }
    this.onIdle(this.quietMs);
  }

  #clear(): void {
    this.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
