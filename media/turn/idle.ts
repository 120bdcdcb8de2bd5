// Idle as its own small stage (Pipecat's IdleFrameProcessor): once the call is quiet (nobody
// speaks, nothing plays, no reply awaited), a timer runs for the idle timeout; activity restarts
// it, and the call ceasing to be quiet stops it. No poll: the call says when something happened
// (activity) or when the floor may have changed hands (check).
export class IdleStage {
  #timeoutMs = 0;
  #timer?: ReturnType<typeof setTimeout>;
  /** When the quiet being timed began. */
  #since = 0;
  #stopped = false;

  constructor(
    private quiet: () => boolean,
    /** idleMs: how long the call has been quiet. */
    private onIdle: (idleMs: number) => void,
    private now: () => number = () => performance.now(),
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
    return Math.round(this.now() - this.#since);
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
    this.#since = this.now();
    this.#arm();
  }

  stop(): void {
    this.#stopped = true;
    this.#clear();
  }

  #arm(): void {
    clearTimeout(this.#timer);
    if (this.#timeoutMs <= 0) return this.#clear();
    const left = Math.max(0, this.#since + this.#timeoutMs - this.now());
    this.#timer = setTimeout(() => this.#fire(), left);
  }

  #fire(): void {
    this.#timer = undefined;
    if (this.#stopped || !this.quiet()) return;
    this.onIdle(this.quietMs);
  }

  #clear(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
