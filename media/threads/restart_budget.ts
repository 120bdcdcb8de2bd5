// How often a local engine (pocketsphinx, espeak-ng) replaces a thread that crashed: at most
// MAX_RESTARTS in any minute, so a thread that crashes on every start cannot spin the node's
// cores; beyond that the engine runs on the threads it has left. Both engines' threads are the
// same kind of thing (a Worker with its own isolate), so they share one budget rule and one
// count of restarts (the metrics read `restarted`).

/** Crashed threads replaced per minute at most. */
export const MAX_RESTARTS = 5;
const WINDOW_MS = 60_000;

export class RestartBudget {
  #at: number[] = [];
  /** Threads replaced since the engine started. */
  restarted = 0;

  constructor(
    private max = MAX_RESTARTS,
    private clock: () => number = () => performance.now(),
  ) {}

  /** Whether a crashed thread may be replaced now; counts the restart when it may. */
  take(): boolean {
    const now = this.clock();
    this.#at = this.#at.filter((t) => now - t < WINDOW_MS);
    if (this.#at.length >= this.max) return false;
    this.#at.push(now);
    this.restarted++;
    return true;
  }

  /**
   * A new thread (`spawn`) for one that crashed, when the budget allows. A thread that cannot start
   * kills itself, and that crash comes back here: its rejection is not this caller's.
   */
  replace(spawn: () => Promise<unknown>): void {
    if (this.take()) spawn().catch(() => {});
  }
}
