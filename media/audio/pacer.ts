/**
 * Outbound audio pacer: calls `tick` once per frame (20 ms) on a FrameClock's fixed grid, and
 * keeps its own count of ticks, skipped frames and lateness. Without a clock of its own choosing
 * it gets a private one (a timer of its own); the worker's calls share one (frame_clock.ts).
 */
import { type ClockTick, FrameClock } from "./frame_clock.ts";

export interface PacerTick {
  /** Frame index on the grid (counts skipped frames too). */
  frame: number;
  /** performance.now() value the tick was due at. */
  scheduledAt: number;
  /** How late the tick ran, in ms (actual minus scheduled). */
  lateMs: number;
}

export interface PacerOptions {
  /**
   * The grid to tick on, shared with other pacers; its own interval and lag settings then apply,
   * not the three below. Default: a private clock made from them.
   */
  clock?: FrameClock;
  /** Frame interval in ms (default 20). */
  intervalMs?: number;
  /** Lag, in frames, above which missed frames are skipped instead of caught up (default 3). */
  maxLagFrames?: number;
  /** Smallest gap between two ticks while catching up (default intervalMs / 4). */
  minGapMs?: number;
  /** Keep each tick's lateness in `jitter` (for benchmarks; grows by one number per tick). */
  recordJitter?: boolean;
  /**
   * Count each tick's lateness in a fixed-size histogram (default true): constant memory, so a
   * call of any length can report p50/p99 lateness.
   */
  histogram?: boolean;
  /** Called when `tick` throws; the pacer keeps running. Default: console.error. */
  onError?: (error: unknown) => void;
}

export interface PacerStats {
  ticks: number;
  skipped: number;
  meanLateMs: number;
  p50LateMs: number;
  p99LateMs: number;
  maxLateMs: number;
  /** The live lateness histogram, when kept (for merging across pacers; not a copy). */
  histogram?: LatenessHistogram;
}

/**
 * Lateness counts in fixed buckets (default 0.25 ms wide up to 100 ms, plus one overflow bucket).
 * Quantiles are bucket upper edges (capped at the largest value seen), so they err on the late
 * side by at most one bucket width.
 */
export class LatenessHistogram {
  readonly bucketMs: number;
  readonly maxMs: number;
  /** counts[i] holds values in [i*bucketMs, (i+1)*bucketMs); the last one everything >= maxMs. */
  readonly counts: Uint32Array;
  count = 0;
  sumMs = 0;
  maxLateMs = 0;

  constructor(bucketMs = 0.25, maxMs = 100) {
    this.bucketMs = bucketMs;
    this.maxMs = maxMs;
    this.counts = new Uint32Array(Math.ceil(maxMs / bucketMs) + 1);
  }

  add(ms: number): void {
    // Timers may fire slightly early: negative lateness counts as on time (bucket 0).
    const i = ms > 0 ? Math.min(this.counts.length - 1, Math.floor(ms / this.bucketMs)) : 0;
    this.counts[i]++;
    this.count++;
    this.sumMs += ms;
    if (ms > this.maxLateMs) this.maxLateMs = ms;
  }

  /** Adds another histogram of the same shape into this one. */
  merge(other: LatenessHistogram): void {
    if (other.counts.length !== this.counts.length || other.bucketMs !== this.bucketMs) {
      throw new Error("histograms of different shapes");
    }
    for (let i = 0; i < this.counts.length; i++) this.counts[i] += other.counts[i];
    this.count += other.count;
    this.sumMs += other.sumMs;
    if (other.maxLateMs > this.maxLateMs) this.maxLateMs = other.maxLateMs;
  }

  /** The q-quantile (same rank as Pacer.stats on raw samples: floor(q * count)). */
  quantile(q: number): number {
    if (this.count === 0) return 0;
    const rank = Math.min(this.count - 1, Math.floor(q * this.count));
    const overflow = this.counts.length - 1;
    let seen = 0;
    for (let i = 0; i < overflow; i++) {
      seen += this.counts[i];
      if (seen > rank) return Math.min((i + 1) * this.bucketMs, this.maxLateMs);
    }
    return this.maxLateMs; // in the overflow bucket: the largest value seen is all we know
  }

  /**
   * How many values fell in buckets that end at or below `ms` (all of them below `ms`): exact at
   * bucket edges (multiples of bucketMs up to maxMs), an undercount by part of a bucket between.
   */
  countBelow(ms: number): number {
    const whole = Math.min(this.counts.length - 1, Math.floor(ms / this.bucketMs + 1e-9));
    let n = 0;
    for (let i = 0; i < whole; i++) n += this.counts[i];
    return n;
  }

  reset(): void {
    this.counts.fill(0);
    this.count = 0;
    this.sumMs = 0;
    this.maxLateMs = 0;
  }
}

export class Pacer {
  readonly clock: FrameClock;
  /** Lateness of each tick in ms, when recordJitter is set. */
  readonly jitter: number[] = [];
  /** Ticks run since start(). */
  ticks = 0;
  /** Frames skipped by resynchronisation since start(). */
  skipped = 0;
  /** Lateness of every tick since start(), unless the `histogram: false` option was given. */
  readonly histogram: LatenessHistogram | undefined;

  #tick: (t: PacerTick) => void;
  #record: boolean;
  #onError: (e: unknown) => void;
  #running = false;
  /** The clock's frame that was this pacer's frame 0, and the last frame ticked. */
  #first = -1;
  #last = -1;
  #info: PacerTick = { frame: 0, scheduledAt: 0, lateMs: 0 };

  constructor(tick: (t: PacerTick) => void, options: PacerOptions = {}) {
    this.#tick = tick;
    this.clock = options.clock ?? new FrameClock(options);
    this.#record = options.recordJitter ?? false;
    this.histogram = options.histogram === false ? undefined : new LatenessHistogram();
    this.#onError = options.onError ?? ((e) => console.error("pacer tick failed:", e));
  }

  get intervalMs(): number {
    return this.clock.intervalMs;
  }

  get running(): boolean {
    return this.#running;
  }

  /** Starts ticking: frame 0 at the clock's next wake (at once, on a clock of its own). */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.ticks = 0;
    this.skipped = 0;
    this.jitter.length = 0;
    this.histogram?.reset();
    this.#first = -1;
    this.#last = -1;
    this.clock.add(this.#onClock);
  }

  stop(): void {
    this.#running = false;
    this.clock.delete(this.#onClock);
  }

  /** Exact figures from `jitter` when recorded; otherwise from the histogram (if kept). */
  stats(): PacerStats {
    const h = this.histogram;
    if (!this.#record && h) {
      return {
        ticks: this.ticks,
        skipped: this.skipped,
        meanLateMs: h.count ? h.sumMs / h.count : 0,
        p50LateMs: h.quantile(0.5),
        p99LateMs: h.quantile(0.99),
        maxLateMs: h.maxLateMs,
        histogram: h,
      };
    }
    const s = [...this.jitter].sort((a, b) => a - b);
    const at = (q: number) => (s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : 0);
    return {
      ticks: this.ticks,
      skipped: this.skipped,
      meanLateMs: s.length ? s.reduce((a, b) => a + b, 0) / s.length : 0,
      p50LateMs: at(0.5),
      p99LateMs: at(0.99),
      maxLateMs: s.length ? s[s.length - 1] : 0,
      histogram: h,
    };
  }

  #onClock = (t: ClockTick): void => {
    if (this.#first < 0) this.#first = t.frame;
    const frame = t.frame - this.#first;
    // The clock skipped frames after a stall: they count, and the grid goes on.
    if (this.#last >= 0 && frame > this.#last + 1) this.skipped += frame - this.#last - 1;
    this.#last = frame;
    const info = this.#info;
    info.frame = frame;
    info.scheduledAt = t.scheduledAt;
    info.lateMs = performance.now() - t.scheduledAt;
    if (this.#record) this.jitter.push(info.lateMs);
    this.histogram?.add(info.lateMs);
    this.ticks++;
    try {
      this.#tick(info);
    } catch (e) {
      this.#onError(e);
    }
  };
}
