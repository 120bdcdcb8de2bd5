// A phone call's key presses on their way to the brain, whatever carries them (RFC 4733 or SIP
// INFO on SIP, a provider stream's dtmf events): one limiter for all, as web calls' RTVI messages
// have theirs (20 a second), so a caller (or a forged stream) pressing thousands of keys cannot
// flood the brain and the record. Keys pressed before the brain is up are held (a few) and sent
// once it is, not lost.
//
// One press heard twice, as an in-band tone (media/phone/dtmf_tones.ts) and as a signalled event
// (RFC 4733, SIP INFO, a carrier's dtmf message) on a line that sends both, reaches the brain
// once: a tone and a signalled key of the same digit within DUPLICATE_MS of each other are one
// press, each pair matched once, so a caller pressing the same key twice quickly still gives two.
//
// While the call's keypad is sensitive (Config.keypad.sensitive) the record says "*" for the
// digit; only the Dtmf frame to the brain carries it (conversation.ts logs that frame masked).
import type { DtmfDigit } from "../phone/line.ts";
import type { SessionLog } from "./session_log.ts";
import { TokenBucket } from "../../common/token_bucket.ts";

/** Key presses a second, sustained, and the burst: RTVI's 20 a second (media/rtvi/session.ts). */
export const KEY_PRESS_LIMIT = { perSecond: 20, burst: 20 };
/** Keys held until the brain is up; more are dropped (a caller does not type ahead further). */
const HELD_BEFORE_START = 20;
/** At most one `phone/dtmf_dropped` record entry per this many ms. */
const DROPPED_NOTE_MS = 1000;
/** A tone and a signalled key of one digit this close (ms, reported at their ends) are one press. */
export const DUPLICATE_MS = 500;
/** What the worker writes in place of a sensitive digit (one constant with redaction's). */
import { MASKED_DIGIT } from "../../common/redaction.ts";
export { MASKED_DIGIT };

/** A key as the record may show it: the digit, or "*" while keys are sensitive. */
export const shownDigit = (digit: string, sensitive: boolean): string =>
  sensitive ? MASKED_DIGIT : digit;

const isTone = (d: DtmfDigit) => d.via === "tone";

export class KeyPresses {
  readonly #bucket: TokenBucket;
  #held: DtmfDigit[] = [];
  #open = false;
  #dropped = 0;
  #droppedNoted = 0;
  #notedAt = -Infinity;
  #duplicates = 0;
  /** Recent presses not yet matched to their other form: digit, tone or not, when. */
  #recent: { digit: string; tone: boolean; at: number }[] = [];

  constructor(
    private readonly log: SessionLog,
    /** Sends a key to the brain (once it is up). */
    private readonly deliver: (d: DtmfDigit) => void,
    private readonly now = () => performance.now(),
    /** Whether the keys are sensitive now (the call's Config.keypad.sensitive). */
    private readonly sensitive: () => boolean = () => false,
  ) {
    this.#bucket = new TokenBucket(KEY_PRESS_LIMIT.perSecond, KEY_PRESS_LIMIT.burst, now);
  }

  /** Keys refused so far (over the rate, or too many before the brain was up). */
  get dropped(): number {
    return this.#dropped;
  }

  /** Presses dropped as the other form of a press already passed (tone and event). */
  get duplicates(): number {
    return this.#duplicates;
  }

  /** One key from the line. */
  press(d: DtmfDigit): void {
    if (this.#sameAsRecent(d)) {
      this.#duplicates++;
      return;
    }
    if (!this.#bucket.take() || (!this.#open && this.#held.length >= HELD_BEFORE_START)) {
      this.#dropped++;
      return this.#noteDropped(false);
    }
    this.log.add("phone", "dtmf", {
      digit: shownDigit(d.digit, this.sensitive()),
      duration_ms: d.durationMs,
      ...(d.via ? { via: d.via } : {}),
    });
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

  /** True when `d` is the other form of a recent press (then that press is matched, once). */
  #sameAsRecent(d: DtmfDigit): boolean {
    const now = this.now(), tone = isTone(d);
    this.#recent = this.#recent.filter((r) => now - r.at <= DUPLICATE_MS);
    const i = this.#recent.findIndex((r) => r.digit === d.digit && r.tone !== tone);
    if (i >= 0) {
      this.#recent.splice(i, 1);
      return true;
    }
    this.#recent.push({ digit: d.digit, tone, at: now });
    return false;
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
