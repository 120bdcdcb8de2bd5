// Side-effect module, imported by peer.ts: a fix for werift 0.25.2 found by the Chromium test
// under CPU load (the call never became ready: every packet failed to decrypt).
// werift's DTLS client re-runs flight 5 (with a fresh ECDHE key pair) when the server's flight 4
// is retransmitted after flight 5 went out; once the server's Finished has set dtls.flight to 7,
// Flight5.exec's `flight === 5` guard no longer catches it and the keys diverge. Drop a repeated
// flight 4 on a client that is past it; werift's own flight 5 retransmit timer covers loss.
import { DtlsSocket } from "werift";
const FLIGHT4 = new Set([2, 11, 12, 13, 14]); // server_hello .. server_hello_done
const CLIENT = 1;
// deno-lint-ignore no-explicit-any
const proto = DtlsSocket.prototype as any;
const original = proto.handleFragmentHandshake;
// deno-lint-ignore no-explicit-any
proto.handleFragmentHandshake = function (this: any, messages: unknown[]) {
  // deno-lint-ignore no-explicit-any
  const out = original.call(this, messages) as any[];
  if (this.sessionType !== CLIENT || this.dtls.flight < 5) return out;
  return out.filter((h) => !FLIGHT4.has(h.msg_type));
};
