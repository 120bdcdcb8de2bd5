/**
 * DTMF from RFC 4733 telephone-event packets: one DtmfDigit per key press, when it ends.
 *
 * Every packet of one event carries the event's start timestamp and a growing duration; the
 * last one has the E bit and is sent three times (section 2.5.1.4). So an event is known by its
 * timestamp: the first end packet reports the digit and the other two, whatever their sequence
 * numbers, are counted and dropped. An event whose end packets were all lost is reported when
 * the next event starts, or when the caller's audio has run on past it (`audioAt`).
 */
import type { DtmfDigit } from "./line.ts";

/** Event codes 0-15 (section 3.2 of RFC 4733): the 16 DTMF keys. */
const KEYS = "0123456789*#ABCD";

/** Audio this far (8 kHz ticks, 100 ms) past an unended event's last duration ends it. */
const END_LOST_TICKS = 800;

export interface TelephoneEventStats {
  /** Digits reported. */
  digits: number;
  /** Redundant end packets of a reported event, dropped. */
  redundant: number;
  /** Events reported without any end packet (all three lost). */
  endLost: number;
  /** Events that are not DTMF keys (flash, tones) or packets too short: ignored. */
  ignored: number;
}

interface Open {
  timestamp: number;
  key: string;
  duration: number;
}

export class TelephoneEvents {
  readonly stats: TelephoneEventStats = { digits: 0, redundant: 0, endLost: 0, ignored: 0 };
  #open: Open | undefined;
  /** Start timestamps of the events already reported (the last few). */
  #done: number[] = [];

  constructor(private onDigit: (digit: DtmfDigit) => void) {}

  /** Takes one telephone-event packet's timestamp and payload, in sequence order. */
  push(timestamp: number, payload: Uint8Array): void {
    if (payload.length < 4) {
      this.stats.ignored++;
      return;
    }
    const code = payload[0], end = (payload[1] & 0x80) !== 0;
    const duration = (payload[2] << 8) | payload[3];
    if (this.#done.includes(timestamp)) {
      this.stats.redundant++;
      return;
    }
    if (code >= KEYS.length) {
      this.stats.ignored++;
      return;
    }
    const open = this.#open;
    if (open && open.timestamp !== timestamp) {
      // A new event before the last one's end: its end packets were all lost.
      this.stats.endLost++;
      this.#report(open);
    }
    const event = { timestamp, key: KEYS[code], duration };
    if (end) this.#report(event);
    else this.#open = event;
  }

  /** The caller's audio reached `timestamp`: an event it has run well past has ended. */
  audioAt(timestamp: number): void {
    const open = this.#open;
    if (!open) return;
    if (((timestamp - open.timestamp - open.duration) | 0) > END_LOST_TICKS) {
      this.stats.endLost++;
      this.#report(open);
    }
  }

  #report(event: Open): void {
    this.#open = undefined;
    this.#done.push(event.timestamp);
    if (this.#done.length > 8) this.#done.shift();
    this.stats.digits++;
    this.onDigit({ digit: event.key, durationMs: event.duration / 8 });
  }
}
