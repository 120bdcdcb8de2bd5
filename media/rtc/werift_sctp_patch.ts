// Side-effect module, imported by peer.ts and the test caller: werift 0.25.2's SCTP starts with a
// 3 s retransmission timeout (RFC 4960's RTO.Initial) and keeps it, without backing off, for INIT
// and COOKIE-ECHO, so at 20 % loss a lost INIT or COOKIE-ECHO (issue 25) held the data channel
// shut for 3 s each time: a werift caller's channel opened 3-6 s after DTLS. Browsers start lower
// (Chromium's dcsctp: 500 ms). Each association starts at 1 s here, TCP's initial RTO (RFC 6298),
// which still leaves a slow path's first round trip time to answer; werift's own RTT estimate
// replaces it after the first acknowledged DATA, exactly as before. Patched, not forked: werift
// builds the association inside RTCSctpTransport.setDtlsTransport and exposes no option for it.
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
  if (this.sctp && this.sctp !== before) this.sctp.rto = SCTP_INITIAL_RTO_S;
  return out;
};
