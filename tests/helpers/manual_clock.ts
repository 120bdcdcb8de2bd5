// A SipClock turned by hand: timers fire when the test advances time past them, in order.
import type { SipClock } from "../../sip/clock.ts";

export class ManualClock implements SipClock {
  now = 0;
  private pending: { at: number; seq: number; fn: () => void; live: boolean }[] = [];
  private seq = 0;

  after(ms: number, fn: () => void) {
    const timer = { at: this.now + ms, seq: this.seq++, fn, live: true };
    this.pending.push(timer);
    return { cancel: () => void (timer.live = false) };
  }

  /** Moves time forward by `ms`, firing every timer due on the way (timers they set included). */
  advance(ms: number): void {
    const until = this.now + ms;
    for (;;) {
      const due = this.pending.filter((t) => t.live && t.at <= until)
        .sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      due.live = false;
      this.now = due.at;
      due.fn();
    }
    this.now = until;
    this.pending = this.pending.filter((t) => t.live);
  }
}
