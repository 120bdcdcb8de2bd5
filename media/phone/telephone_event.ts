/**
 * DTMF from RFC 4733 telephone-event packets: one DtmfDigit per key press, when it ends.
 *
 * Every packet of one event carries the event's start timestamp and a growing duration; the
 * last one has the E bit and is sent three times (section 2.5.1.4). So an event is known by its
 * timestamp: the first end packet reports the digit and the other two, whatever their sequence
 * numbers, are counted and dropped. An event whose end packets were all lost is reported when
 * the next event starts, or when the caller's audio has run on past it (`audioAt`).
 *
 * Nothing rests on the marker bit, which some carriers leave unset on an event's first packet
 * (livekit/sip #585 lost keys that way): the first packet seen of a timestamp starts the event,
 * whether it is the first sent or a later one after the start was lost or came out of order.
 * A long event (over 65535 ticks, about 8 s) goes on in segments whose timestamps follow on
 * (section 2.5.1.3): a segment that continues the open event's key is the same press.
 * Several events in one packet come in the RFC 2198 redundancy format (section 2.5.1.5 of RFC
 * 4733; RFC 2198 section 3): `pushRedundant` takes each block at its own timestamp, oldest
 * first, and the timestamps make the repeats of an event already reported redundant.
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
  /** Ticks of the earlier segments of a long event. */
  base?: number;
}

/**
 * An RFC 2198 redundant payload's blocks, oldest first, each with its own timestamp: headers of
 * 4 bytes (F bit, payload type, 14-bit timestamp offset, 10-bit length) then a last one of 1
 * (F clear, payload type), then the blocks. A malformed payload gives none.
 */
export function redundantBlocks(
  timestamp: number,
  payload: Uint8Array,
): { payloadType: number; timestamp: number; payload: Uint8Array }[] {
  const heads: { payloadType: number; offset: number; length: number }[] = [];
  let at = 0;
  while (at < payload.length && payload[at] & 0x80) {
    if (at + 4 > payload.length) return [];
    const offset = (payload[at + 1] << 6) | (payload[at + 2] >> 2);
    const length = ((payload[at + 2] & 0x03) << 8) | payload[at + 3];
    heads.push({ payloadType: payload[at] & 0x7f, offset, length });
    at += 4;
  }
  if (at >= payload.length) return [];
  const primaryType = payload[at++] & 0x7f;
  const blocks = [];
  for (const h of heads) {
    if (at + h.length > payload.length) return [];
    blocks.push({
      payloadType: h.payloadType,
      timestamp: (timestamp - h.offset) >>> 0,
      payload: payload.subarray(at, at + h.length),
    });
    at += h.length;
  }
  blocks.push({ payloadType: primaryType, timestamp, payload: payload.subarray(at) });
  return blocks;
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
    if (open && open.key === KEYS[code] && timestamp === ((open.timestamp + open.duration) >>> 0)) {
      // The next segment of a long event: the same press, longer.
      this.#remember(open.timestamp);
      open.timestamp = timestamp;
      open.base = (open.base ?? 0) + open.duration;
      open.duration = duration;
      if (end) this.#report(open);
      return;
    }
    if (open && open.timestamp !== timestamp) {
      // A new event before the last one's end: its end packets were all lost.
      this.stats.endLost++;
      this.#report(open);
    }
    const event: Open = { timestamp, key: KEYS[code], duration };
    if (end) return this.#report({ ...event, base: open?.timestamp === timestamp ? open.base : 0 });
    // Packets out of order: the event is as long as the longest duration seen.
    if (open?.timestamp === timestamp) open.duration = Math.max(open.duration, duration);
    else this.#open = event;
  }

  /** A redundant (RFC 2198) packet: its telephone-event blocks, oldest first. */
  pushRedundant(timestamp: number, payload: Uint8Array, eventPayloadType: number): void {
    const blocks = redundantBlocks(timestamp, payload);
    if (!blocks.length) this.stats.ignored++;
    for (const b of blocks) {
      if (b.payloadType === eventPayloadType) this.push(b.timestamp, b.payload);
    }
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

  #remember(timestamp: number): void {
    this.#done.push(timestamp);
    if (this.#done.length > 8) this.#done.shift();
  }

  #report(event: Open): void {
    this.#open = undefined;
    this.#remember(event.timestamp);
    this.stats.digits++;
    this.onDigit({ digit: event.key, durationMs: ((event.base ?? 0) + event.duration) / 8 });
  }
}
