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
