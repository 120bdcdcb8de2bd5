// Side-effect module, imported by peer.ts and the test caller: two fixes to werift 0.25.2's SCTP,
// found at 10-20 % loss between two werift peers (issue 25).
//
// 1. werift's SCTP starts with a
// 3 s retransmission timeout (RFC 4960's RTO.Initial) and keeps it, without backing off, for INIT
// and COOKIE-ECHO, so at 20 % loss a lost INIT or COOKIE-ECHO (issue 25) held the data channel
// shut for 3 s each time: a werift caller's channel opened 3-6 s after DTLS. Browsers start lower
// (Chromium's dcsctp: 500 ms). Each association starts at 1 s here, TCP's initial RTO (RFC 6298),
// which still leaves a slow path's first round trip time to answer; werift's own RTT estimate
// replaces it after the first acknowledged DATA, exactly as before. Patched, not forked: werift
// builds the association inside RTCSctpTransport.setDtlsTransport and exposes no option for it.
//
// 2. When this side's DTLS reports connected late (the peer's last flight was lost and sent again,
// while the peer, already connected, had started SCTP), the peer's INIT .. COOKIE-ECHO arrive first
// and the association is established before werift calls start(). start() then marks it
// "connecting" again and the peer connection waits for a `connected` event that already happened:
// the data channel works, but the connection never reports connected and the worker ended the call
// as connect_timeout 20 s later. An association already established when start() runs is
// announced as connected again once the caller of start() is listening.
//
// 3. werift counts bytes in flight with no record of which chunks it counted, so the count leaks:
// a T3-rtx expiry marks every sent chunk for retransmission, those the peer had already reported
// received (gap-acked) included; resending one adds it to the flight size, and when it is finally
// acknowledged werift subtracts nothing because it was already acked. Each T3 expiry with two holes
// in the sent queue leaks a few hundred bytes, and once the leak reaches the congestion window
// (one packet, ~1.2 KB, after an expiry) no new DATA is sent and no timer runs to recover: the
// worker's data channel to the caller was silent for good at 10 % loss (issue 25, "no bot event
// for 20 s"). Each chunk now carries whether it is counted, so a chunk is added once and removed
// once; a T3 expiry uncounts them all as werift zeroes the sum, and resends only chunks the peer
// has not reported, as Chromium's dcsctp does (net/dcsctp/tx/outstanding_data.cc: NackAll nacks
// only items not acked).
import { RTCSctpTransport } from "werift";

/** Seconds: the retransmission timeout an association starts with. */
export const SCTP_INITIAL_RTO_S = 1;

// deno-lint-ignore no-explicit-any
const proto = RTCSctpTransport.prototype as any;
const setDtlsTransport = proto.setDtlsTransport;
// deno-lint-ignore no-explicit-any
proto.setDtlsTransport = function (this: any, ...args: unknown[]) {
  const before = this.sctp;
  const out = setDtlsTransport.apply(this, args);
  if (this.sctp && this.sctp !== before) {
    this.sctp.rto = SCTP_INITIAL_RTO_S;
    announceEarlyAssociation(this.sctp);
    countFlightOncePerChunk(this.sctp);
  }
  return out;
};

const ESTABLISHED = 4;

// deno-lint-ignore no-explicit-any
function announceEarlyAssociation(sctp: any): void {
  const start = sctp.start;
  sctp.start = async function (this: unknown, ...args: unknown[]) {
    const early = !sctp.started && sctp.associationState === ESTABLISHED;
    await start.apply(sctp, args);
    // werift's connectSctp subscribes to `connected` right after start() resolves: announce it
    // after that, on the next task.
    if (early) {
      setTimeout(() => {
        if (sctp.associationState === ESTABLISHED) sctp.setConnectionState("connected");
      }, 0);
    }
  };
}

/** Set on a DATA chunk while its bytes are counted in the association's flight size. */
const COUNTED = Symbol("counted in flight");

// deno-lint-ignore no-explicit-any
type Chunk = any;

// deno-lint-ignore no-explicit-any
function countFlightOncePerChunk(sctp: any): void {
  sctp.flightSizeIncrease = (chunk: Chunk) => {
    // An acknowledged chunk sent again is already at the peer: werift never uncounts it.
    if (chunk[COUNTED] || chunk.acked) return;
    chunk[COUNTED] = true;
    sctp.flightSize += chunk.bookSize;
  };
  sctp.flightSizeDecrease = (chunk: Chunk) => {
    if (!chunk[COUNTED]) return;
    chunk[COUNTED] = false;
    sctp.flightSize = Math.max(0, sctp.flightSize - chunk.bookSize);
  };
  // Abandoned (partially reliable) chunks leave the sent queue without being uncounted.
  const advance = sctp.updateAdvancedPeerAckPoint;
  sctp.updateAdvancedPeerAckPoint = function (...args: unknown[]) {
    for (const chunk of sctp.sentQueue) {
      if (!chunk.abandoned) break;
      sctp.flightSizeDecrease(chunk);
    }
    return advance.apply(sctp, args);
  };
  // werift's T3-rtx expiry (RFC 4960 6.3.3 E1-E3), but uncounting chunks as it zeroes the flight
  // size and leaving chunks the peer reported received where they are.
  sctp.timer3Expired = () => {
    if (sctp.isStopped) return;
    sctp.timer3Handle = undefined;
    for (const chunk of sctp.sentQueue) {
      chunk[COUNTED] = false;
      if (!sctp.maybeAbandon(chunk) && !chunk.acked) chunk.retransmit = true;
    }
    sctp.updateAdvancedPeerAckPoint();
    sctp.fastRecoveryExit = undefined;
    sctp.flightSize = 0;
    sctp.partialBytesAcked = 0;
    sctp.ssthresh = Math.max(Math.floor(sctp.cwnd / 2), 4 * sctp.maxPayloadSize);
    sctp.cwnd = sctp.maxPayloadSize;
    sctp.transmit();
  };
}
