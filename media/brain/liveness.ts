// Whether the brain's side of the WebSocket is still there. A brain whose process hangs, or whose
// network path stalls, keeps the TCP connection up and sends nothing: no close, no error, just
// silence, which without this would leave the caller in silence for as long as they wait.
//
// Any byte from the brain counts as alive. After a third of `unresponsiveMs` with none the worker
// pings (RFC 6455 §5.5.2: the brain's WebSocket must answer with a pong, which every WebSocket
// library does by itself), and again each third while it stays quiet. After two thirds (a ping
// unanswered for a third of the bound, where a pong takes milliseconds) the brain is `silent`:
// the page is warned. After the whole bound it is `unresponsive`: the call ends. A brain that
// answers pings but chooses not to reply to turns is alive: that is the brain's business (see
// docs/reliability.md).

export interface LivenessEvents {
  /** When the brain last sent any byte (on `clock.now()`'s scale). */
  heardAt(): number;
  ping(): void;
  /** Nothing for `silentMs`; the call ends in `leftMs` unless something comes. */
  silent(silentMs: number, leftMs: number): void;
  /** After `silent`, bytes came again: `silentMs` is how long the gap was at least. */
  back(silentMs: number): void;
  /** Nothing for the whole bound: the brain is gone though its connection is not. */
  unresponsive(silentMs: number): void;
}

/** Time and one-shot timers (a test gives a clock of its own). */
export interface Clock {
  now(): number;
  /** Runs `fn` after `ms`; the returned function cancels it. */
  after(ms: number, fn: () => void): () => void;
}

const realClock: Clock = {
  now: () => performance.now(),
  after: (ms, fn) => {
    const id = setTimeout(fn, ms);
    return () => clearTimeout(id);
  },
};

export class BrainLiveness {
  private cancel?: () => void;
  private pingedAt = -Infinity;
  /** The heardAt that `silent` was reported for (a later one means bytes came since). */
  private silentSince?: number;
  private stopped = false;
  private readonly pingAfterMs: number;

  /** `unresponsiveMs` 0 turns it off: no pings, no end. */
  constructor(
    private readonly unresponsiveMs: number,
    private readonly events: LivenessEvents,
    private readonly clock: Clock = realClock,
  ) {
    this.pingAfterMs = unresponsiveMs / 3;
  }

  start(): void {
    if (this.unresponsiveMs > 0) this.check();
  }

  stop(): void {
    this.stopped = true;
    this.cancel?.();
    this.cancel = undefined;
  }

  private check(): void {
    this.cancel = undefined;
    if (this.stopped) return;
    const t = this.clock.now();
    const heard = this.events.heardAt();
    const quiet = t - heard;
    if (this.silentSince !== undefined && heard > this.silentSince) {
      this.events.back(heard - this.silentSince);
      this.silentSince = undefined;
    }
    if (quiet >= this.unresponsiveMs) {
      this.stopped = true;
      return this.events.unresponsive(quiet);
    }
    if (quiet >= 2 * this.pingAfterMs && this.silentSince === undefined) {
      this.silentSince = heard;
      this.events.silent(quiet, this.unresponsiveMs - quiet);
    }
    // One ping per third of the bound while quiet (a ping already answered does not count).
    if (
      quiet >= this.pingAfterMs && (this.pingedAt < heard || t - this.pingedAt >= this.pingAfterMs)
    ) {
      this.pingedAt = t;
      this.events.ping();
    }
    // The next moment something can be due: a ping, the warning, or the end.
    const due = [
      heard + this.pingAfterMs,
      this.pingedAt + this.pingAfterMs,
      heard + 2 * this.pingAfterMs,
      heard + this.unresponsiveMs,
    ].filter((at) => at > t);
    const next = Math.min(...due);
    this.cancel = this.clock.after(next - t, () => this.check());
  }
}
