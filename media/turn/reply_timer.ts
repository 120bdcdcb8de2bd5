// How long the brain has to start a reply: one timer per awaited turn (the greeting, a user turn,
// an idle turn), cleared by the reply's first unit or when the turn is cancelled, all cleared
// when the call ends. It only tells; turn-taking decides what a timeout means.
export class ReplyTimer {
  private timers = new Map<string, ReturnType<typeof setTimeout>>();
  private stopped = false;

  constructor(private onTimeout: (turnId: string, afterMs: number) => void) {}

  /** Starts waiting for `turnId`'s first unit. */
  arm(turnId: string, ms: number): void {
    if (this.stopped) return;
    this.clear(turnId);
    this.timers.set(
      turnId,
      setTimeout(() => {
        this.timers.delete(turnId);
        this.onTimeout(turnId, ms);
      }, ms),
    );
  }

  /** The reply began, or the turn is no longer awaited. */
  clear(turnId: string): void {
    clearTimeout(this.timers.get(turnId));
    this.timers.delete(turnId);
  }

  /** The call is ending: no timer is left behind. */
  stop(): void {
    this.stopped = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }
}
