/**
 * The 20 ms grid that pacers tick on: one timer for any number of them.
 *
 * Every call of a worker sends a frame every 20 ms. With one timer per call, a worker with 50
 * calls woke its event loop 2,500 times a second; on one shared clock it wakes 50 times and ticks
 * every call in turn. A call that joins gets its first tick at the clock's next wake (at most one
 * interval later), and the clock's timer stops while nobody listens.
 *
 * Deadline n is `start + n * interval` (performance.now), so timer lateness never accumulates
 * into drift. A small lag (up to `maxLagFrames`) is caught up with wakes at least `minGapMs`
 * apart, never back to back; a bigger lag (event loop stalled) skips the missed frames and
 * rejoins the grid, because a burst of stale audio frames would only be dropped or queued by
 * the receiver's jitter buffer.
 */

export interface FrameClockOptions {
  /** Frame interval in ms (default 20). */
  intervalMs?: number;
  /** Lag, in frames, above which missed frames are skipped instead of caught up (default 3). */
  maxLagFrames?: number;
  /** Smallest gap between two wakes while catching up (default intervalMs / 4). */
  minGapMs?: number;
  /** Called when a listener throws; the other listeners and the clock go on. Default: log it. */
  onError?: (error: unknown) => void;
}

/** One wake of the clock, as its listeners see it. */
export interface ClockTick {
  /** Frame index on the clock's grid since it (re)started; skipped frames are counted too. */
  frame: number;
  /** performance.now() value the frame was due at. */
  scheduledAt: number;
}

export type ClockListener = (tick: ClockTick) => void;

export class FrameClock {
  readonly intervalMs: number;
  readonly maxLagFrames: number;
  readonly minGapMs: number;
  /** Timer wakes that ticked the listeners (catch-up wakes included, early re-arms not). */
  wakes = 0;

  #listeners = new Set<ClockListener>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #start = 0;
  #next = 0;
  #ticking = false;
  #tick: ClockTick = { frame: 0, scheduledAt: 0 };
  #onError: (e: unknown) => void;

  constructor(options: FrameClockOptions = {}) {
    this.intervalMs = options.intervalMs ?? 20;
    this.maxLagFrames = options.maxLagFrames ?? 3;
    this.minGapMs = options.minGapMs ?? this.intervalMs / 4;
    this.#onError = options.onError ?? ((e) => console.error("frame clock listener failed:", e));
  }

  /** Listeners now ticked on every wake. */
  get listeners(): number {
    return this.#listeners.size;
  }

  /**
   * Ticks `listener` from the next wake on (added during a wake: from that wake). The first
   * listener starts the grid now, with an immediate first wake (frame 0).
   */
  add(listener: ClockListener): void {
    this.#listeners.add(listener);
    if (this.#timer === undefined && !this.#ticking && this.#listeners.size === 1) {
      this.#start = performance.now();
      this.#next = 0;
      this.#schedule(0);
    }
  }

  /** Stops ticking `listener` (also from inside a tick); the last one out stops the timer. */
  delete(listener: ClockListener): void {
    this.#listeners.delete(listener);
    if (this.#listeners.size === 0 && this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
  }

  #schedule(delay: number): void {
    this.#timer = setTimeout(this.#wake, Math.max(0, delay));
  }

  #wake = (): void => {
    this.#timer = undefined;
    if (this.#listeners.size === 0) return;
    const wokeAt = performance.now();
    let due = this.#start + this.#next * this.intervalMs;
    // The timer clock counts whole milliseconds, so a wake may come up to 1 ms early. A frame sent
    // that early is on time for the receiver; waiting for the exact deadline cost a second timer
    // wake on almost half the frames (0.25 ms tolerance: 219 wakes per 151 ticks).
    if (wokeAt < due - 1) return this.#schedule(due - wokeAt);
    const lag = Math.floor((wokeAt - due) / this.intervalMs);
    if (lag > this.maxLagFrames) {
      this.#next += lag;
      due = this.#start + this.#next * this.intervalMs;
    }
    const tick = this.#tick;
    tick.frame = this.#next;
    tick.scheduledAt = due;
    this.#next++;
    this.wakes++;
    // A Set visits listeners added during the loop and skips ones deleted before their turn.
    this.#ticking = true;
    for (const listener of this.#listeners) {
      try {
        listener(tick);
      } catch (e) {
        this.#onError(e);
      }
    }
    this.#ticking = false;
    if (this.#listeners.size === 0) return;
    const nextDue = this.#start + this.#next * this.intervalMs;
    // Behind schedule: still leave minGapMs between wakes rather than bursting.
    this.#schedule(Math.max(nextDue, wokeAt + this.minGapMs) - performance.now());
  };
}

let shared: FrameClock | undefined;

/** The worker's one clock for every call's outbound audio. */
export function sharedFrameClock(): FrameClock {
  return shared ??= new FrameClock();
}
