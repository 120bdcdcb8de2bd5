// Which source a call's RTP is taken from and sent back to (RFC 4961 symmetric RTP), without
// letting a stranger who sprays packets at every port of RTP_PORTS take the call over.
//
// - Only addresses the call named are heard: the SDP's c= address and the address the INVITE came
//   from. With `symmetric` (RTP_SYMMETRIC=1, for trunks behind NAT whose media comes from an
//   address neither names) other addresses may be heard too, but only after probation, and only
//   while no named address is sending.
// - The first packet from a named address latches at once (its port may differ from the SDP's:
//   a NAT in front of the trunk), also over a source that is not named. Any other source is on
//   probation: it must send PROBATION packets in sequence (same SSRC, sequence numbers one apart,
//   as RFC 3550 A.1 and Asterisk's strictrtp ask) before it is heard.
// - Another source takes over only when it has passed probation and the latched one (or, before
//   any latch, the stream's start) has been quiet for RELATCH_QUIET_MS: a live trunk, sending
//   every 20 ms, is never displaced, and a stranger never gets in before the trunk's first packet.
import type { Peer } from "../../sip/udp.ts";

/** Packets in sequence a new source must send before it is heard (Asterisk's strictrtp: 4). */
export const PROBATION = 4;
/** How long the latched source must have been quiet before another may take its place. */
export const RELATCH_QUIET_MS = 500;

export interface LatchCounts {
  latches: number;
  /** Packets from a source not heard: a stranger, or a candidate still on probation. */
  foreign: number;
}

interface Candidate {
  peer: Peer;
  ssrc: number;
  seq: number;
  run: number;
}

const same = (a: Peer | undefined, b: Peer) => a?.address === b.address && a.port === b.port;

export class RtpLatch {
  #named = new Set<string>();
  #latched: Peer | undefined;
  #latchedNamed = false;
  /** The latched source's last packet, or the stream's start before any. */
  #lastAt = -Infinity;
  #candidate: Candidate | undefined;

  constructor(private readonly symmetric: boolean, private readonly counts: LatchCounts) {}

  /** A new stream (the answer, or a re-INVITE that moved it): named addresses, nothing latched. */
  reset(named: (string | undefined)[], now: number): void {
    this.#named = new Set(named.filter((a): a is string => !!a));
    this.#latched = undefined;
    this.#latchedNamed = false;
    this.#candidate = undefined;
    this.#lastAt = now;
  }

  /** The source packets are sent back to, once latched. */
  get source(): Peer | undefined {
    return this.#latched;
  }

  /** Whether a valid packet of the call's payload types from `from` is heard. */
  accept(from: Peer, ssrc: number, seq: number, now: number): boolean {
    if (same(this.#latched, from)) {
      this.#lastAt = now;
      this.#candidate = undefined;
      return true;
    }
    const named = this.#named.has(from.address);
    if (!named && !this.symmetric) return this.#refuse();
    if (named && !this.#latchedNamed) return this.#latch(from, now, true);
    if (!this.#onProbation(from, ssrc, seq)) return this.#refuse();
    if (now - this.#lastAt < RELATCH_QUIET_MS) return this.#refuse();
    return this.#latch(from, now, named);
  }

  /** True once `from` has sent PROBATION packets in sequence with one SSRC. */
  #onProbation(from: Peer, ssrc: number, seq: number): boolean {
    const c = this.#candidate;
    if (c && same(c.peer, from) && c.ssrc === ssrc && seq === ((c.seq + 1) & 0xffff)) {
      c.seq = seq;
      c.run++;
    } else {
      this.#candidate = { peer: from, ssrc, seq, run: 1 };
    }
    return this.#candidate!.run >= PROBATION;
  }

  #latch(from: Peer, now: number, named: boolean): boolean {
    this.#latched = from;
    this.#latchedNamed = named;
    this.#lastAt = now;
    this.#candidate = undefined;
    this.counts.latches++;
    return true;
  }

  #refuse(): boolean {
    this.counts.foreign++;
    return false;
  }
}
