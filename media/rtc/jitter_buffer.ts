/**
 * Puts the caller's RTP packets back on the caller's timeline: in sequence order, one slot per
 * 20 ms frame, a gap where a packet never came. Released by arrivals, not by a timer: a packet
 * goes out once `depth` newer ones have come, a gap once `depth + 1` have, so a packet that comes
 * up to `depth` places late is still put in its place. Depth starts at 0 (today's latency) and grows with the measured
 * arrival jitter (RFC 3550 §6.4.1) and with every packet that came too late (counted, dropped),
 * then shrinks back once the link has been quiet for a while.
 *
 * A lost slot carries the packet after it when that has arrived, so the decoder can rebuild it
 * from that packet's in-band FEC (receiver.ts). A jump of the RTP timestamp larger than the
 * sequence step (the caller paused sending, e.g. DTX) becomes gap slots too, up to a bound, so
 * the timeline keeps the caller's time.
 *
 * Why not werift's JitterBufferBase (rtp/src/extra/processor): its latency is fixed at creation,
 * not sized from jitter; it holds everything behind a gap until that latency has passed even
 * when the next packet (and its FEC) is already there; and it scans its buffer on every push.
 */

/** One 20 ms frame of the caller's timeline. */
export interface Slot {
  /** The frame's Opus packet; absent when it was lost. */
  payload?: Uint8Array;
  /** For a lost frame: the next packet, when it has arrived (its FEC may rebuild this one). */
  next?: Uint8Array;
}

export interface JitterStats {
  /** Packets taken in (duplicates and late ones excluded). */
  received: number;
  /** Slots released without their packet. */
  lost: number;
  /** Packets that came after their slot was released: counted and dropped. */
  late: number;
  /** Packets already held or released once. */
  duplicates: number;
  /** Interarrival jitter, ms (RFC 3550 estimate). */
  jitterMs: number;
  /** Current depth, in packets held behind the oldest unreleased slot. */
  depth: number;
  /** Sequence jumps too large to be loss, after which the timeline started again. */
  restarts: number;
  /** Gap slots left out because the timeline would have run ahead of the arrival clock. */
  unfilled: number;
}

/** RTP clock ticks in one 20 ms Opus frame at 48 kHz. */
export const TICKS_PER_FRAME = 960;
/** Deepest the buffer grows: 200 ms of the caller's audio. */
export const MAX_DEPTH = 10;
/** Longest pause (in frames) filled with gap slots; a longer jump starts the timeline afresh. */
export const MAX_GAP_FRAMES = 250;
/** A sequence jump (either way) beyond this many packets is a new run, not loss. */
export const MAX_JUMP = 500;
/**
 * How far (in frames) the timeline may run ahead of the time packets have been arriving for. Gap
 * slots cost a concealment each: without this, a caller sending sequence or timestamp jumps could
 * make the worker conceal hundreds of frames per packet, on the event loop every call shares.
 */
export const AHEAD_SLACK_FRAMES = 50;
/** Frames without a late packet after which one step of late-packet depth is given back. */
const LATE_DECAY_FRAMES = 250;

interface Held {
  payload: Uint8Array;
  timestamp: number;
}

export class JitterBuffer {
  #held = new Map<number, Held>();
  /** Extended (32-bit, unwrapped) sequence number of the next slot to release. */
  #next: number | undefined;
  /** Highest extended sequence number taken in. */
  #highest = -1;
  /** Extended sequence number and RTP timestamp of the last released packet (for gaps). */
  #lastTs: number | undefined;
  #lastTsSeq = 0;
  #transit: number | undefined;
  #jitterTicks = 0;
  #lateDepth = 0;
  #sinceLate = 0;
  readonly stats: JitterStats = {
    received: 0,
    lost: 0,
    late: 0,
    duplicates: 0,
    jitterMs: 0,
    depth: 0,
    restarts: 0,
    unfilled: 0,
  };
  /** Arrival time of the first packet, and of the latest (ms). */
  #firstArrival: number | undefined;
  #lastArrival = 0;
  /** Slots released so far. */
  #slots = 0;

  /**
   * Takes one packet (its 16-bit sequence number, 32-bit RTP timestamp, payload and arrival
   * time in ms); returns the slots it releases, oldest first. The payload is kept, not copied.
   */
  push(sequenceNumber: number, timestamp: number, payload: Uint8Array, arrivalMs: number): Slot[] {
    const seq = this.#extend(sequenceNumber);
    this.#firstArrival ??= arrivalMs;
    this.#lastArrival = Math.max(this.#lastArrival, arrivalMs);
    let out: Slot[] = [];
    if (this.#next !== undefined && Math.abs(seq - this.#next) > MAX_JUMP) {
      // Not the same run of packets (a restarted sender, or garbage): what is held goes out and
      // the timeline starts again here, rather than filling thousands of slots.
      out = this.#release(true);
      this.#next = undefined;
      this.stats.restarts++;
    }
    if (this.#next === undefined) {
      this.#next = seq;
      this.#highest = seq - 1;
      this.#lastTs = undefined;
    }
    if (seq < this.#next) {
      // Its slot is gone: a duplicate of a released packet, or one that came too late.
      if (this.#released.includes(seq)) this.stats.duplicates++;
      else this.#late();
      return out;
    }
    if (this.#held.has(seq)) {
      this.stats.duplicates++;
      return out;
    }
    this.stats.received++;
    this.#measureJitter(timestamp, arrivalMs);
    this.#held.set(seq, { payload, timestamp });
    if (seq > this.#highest) this.#highest = seq;
    return out.concat(this.#release(false));
  }

  /** Releases every slot still held (the call ends): gaps up to the newest packet included. */
  flush(): Slot[] {
    return this.#release(true);
  }

  /** Extended sequence numbers released with their packet, the last 2*MAX_DEPTH of them. */
  #released: number[] = [];

  #late(): void {
    this.stats.late++;
    this.#sinceLate = 0;
    if (this.#lateDepth < MAX_DEPTH) this.#lateDepth++;
    this.#updateDepth();
  }

  #release(all: boolean): Slot[] {
    const out: Slot[] = [];
    if (this.#next === undefined) return out;
    for (let seq: number = this.#next; seq <= this.#highest; seq = this.#next) {
      const held = this.#held.get(seq);
      // A packet waits until `depth` newer ones came; a missing one gets one more, so a packet
      // up to `depth` places out of order still finds its slot.
      const behind = this.#highest - seq;
      if (!all && (held ? behind < this.stats.depth : behind <= this.stats.depth)) break;
      if (held) {
        const ts = held.timestamp;
        this.#fillPause(seq, ts, out);
        out.push({ payload: held.payload });
        this.#slots++;
        this.#held.delete(seq);
        this.#lastTs = ts;
        this.#lastTsSeq = seq;
        this.#released.push(seq);
        if (this.#released.length > 2 * MAX_DEPTH) this.#released.shift();
      } else {
        const after = this.#held.get(seq + 1);
        if (this.#mayFill()) {
          out.push(after ? { next: after.payload } : {});
          this.#slots++;
        }
        this.stats.lost++;
      }
      this.#next = seq + 1;
      this.#tick();
    }
    return out;
  }

  /** Gap slots for a timestamp jump beyond the sequence step (a pause in sending). */
  #fillPause(seq: number, ts: number, out: Slot[]): void {
    if (this.#lastTs === undefined) return;
    const frames = Math.round(((ts - this.#lastTs) >>> 0) / TICKS_PER_FRAME);
    const extra = frames - (seq - this.#lastTsSeq);
    if (extra <= 0 || extra > MAX_GAP_FRAMES) return;
    for (let i = 0; i < extra && this.#mayFill(); i++) {
      out.push({});
      this.#slots++;
    }
  }

  /** Whether one more gap slot keeps the timeline within reach of the arrival clock. */
  #mayFill(): boolean {
    const elapsed = this.#lastArrival - (this.#firstArrival ?? this.#lastArrival);
    if (this.#slots < elapsed / 20 + AHEAD_SLACK_FRAMES) return true;
    this.stats.unfilled++;
    return false;
  }

  #tick(): void {
    if (this.#lateDepth > 0 && ++this.#sinceLate >= LATE_DECAY_FRAMES) {
      this.#lateDepth--;
      this.#sinceLate = 0;
      this.#updateDepth();
    }
  }

  #measureJitter(timestamp: number, arrivalMs: number): void {
    const transit = arrivalMs * (TICKS_PER_FRAME / 20) - timestamp;
    if (this.#transit !== undefined) {
      // Differences of 32-bit timestamps: keep them small across the wrap.
      let d = transit - this.#transit;
      d = ((d % 2 ** 32) + 2 ** 32 + 2 ** 31) % 2 ** 32 - 2 ** 31;
      this.#jitterTicks += (Math.abs(d) - this.#jitterTicks) / 16;
    }
    this.#transit = transit;
    this.stats.jitterMs = this.#jitterTicks / (TICKS_PER_FRAME / 20);
    this.#updateDepth();
  }

  /** Enough 20 ms slots to cover twice the jitter, plus one per recent late packet. */
  #updateDepth(): void {
    const fromJitter = Math.floor((2 * this.stats.jitterMs) / 20);
    this.stats.depth = Math.min(MAX_DEPTH, fromJitter + this.#lateDepth);
  }

  /** Unwraps a 16-bit sequence number next to the highest one seen. */
  #extend(seq16: number): number {
    if (this.#highest < 0) return seq16 + 0x10000; // room below for reordered first packets
    const base = this.#highest - (this.#highest & 0xffff);
    let seq = base + seq16;
    if (seq - this.#highest > 0x8000) seq -= 0x10000;
    else if (this.#highest - seq > 0x8000) seq += 0x10000;
    return seq;
  }
}
