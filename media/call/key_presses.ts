// A phone call's key presses on their way to the brain, whatever carries them (RFC 4733 or SIP
// INFO on SIP, a provider stream's dtmf events): one limiter for all, as web calls' RTVI messages
// have theirs (20 a second), so a caller (or a forged stream) pressing thousands of keys cannot
// flood the brain and the record. Keys pressed before the brain is up are held (a few) and sent
// once it is, not lost.
import type { DtmfDigit } from "../phone/line.ts";
import type { SessionLog } from "./session_log.ts";
import { TokenBucket } from "../../common/token_bucket.ts";

/** Key presses a second, sustained, and the burst: RTVI's 20 a second (media/rtvi/session.ts). */
export const KEY_PRESS_LIMIT = { perSecond: 20, burst: 20 };
/** Keys held until the brain is up; more are dropped (a caller does not type ahead further). */
const HELD_BEFORE_START = 20;
/** At most one `phone/dtmf_dropped` record entry per this many ms. */
const DROPPED_NOTE_MS = 1000;

export class KeyPresses {
  readonly #bucket: TokenBucket;
  #held: DtmfDigit[] = [];
  #open = false;
  #dropped = 0;
  #droppedNoted = 0;
  #notedAt = -Infinity;

  constructor(
    private readonly log: SessionLog,
    /** Sends a key to the brain (once it is up). */
    private readonly deliver: (d: DtmfDigit) => void,
    private readonly now = () => performance.now(),
  ) {
    this.#bucket = new TokenBucket(KEY_PRESS_LIMIT.perSecond, KEY_PRESS_LIMIT.burst, now);
  }

  /** Keys refused so far (over the rate, or too many before the brain was up). */
  get dropped(): number {
    return this.#dropped;
  }

  /** One key from the line. */
  press(d: DtmfDigit): void {
    if (!this.#bucket.take() || (!this.#open && this.#held.length >= HELD_BEFORE_START)) {
      this.#dropped++;
      return this.#noteDropped(false);
    }
    this.log.add("phone", "dtmf", { digit: d.digit, duration_ms: d.durationMs });
    if (this.#open) this.deliver(d);
    else this.#held.push(d);
  }

  /** The brain is up: held keys go now, in order, and later ones at once. */
  open(): void {
    if (this.#open) return;
    this.#open = true;
    for (const d of this.#held.splice(0)) this.deliver(d);
  }

  /** The call ends: what was dropped since the last note is noted. */
  close(): void {
    this.#held = [];
    this.#noteDropped(true);
  }

  #noteDropped(final: boolean): void {
    const count = this.#dropped - this.#droppedNoted;
    const now = this.now();
    if (count === 0 || (!final && now - this.#notedAt < DROPPED_NOTE_MS)) return;
    this.#notedAt = now;
    this.#droppedNoted = this.#dropped;
    this.log.add("phone", "dtmf_dropped", {
      count,
      total: this.#dropped,
      limit_per_second: KEY_PRESS_LIMIT.perSecond,
    });
  }
}
