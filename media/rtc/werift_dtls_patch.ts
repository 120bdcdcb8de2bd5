// Side-effect module, imported by peer.ts and the test caller: fixes to werift 0.25.2's DTLS
// handshake, each found by a call that failed. Patched, not forked: werift keeps these paths in
// private members, and each fix below only drops or re-sends records werift already built, so
// the handshake's bytes and keys stay werift's own.
//
// 1. Found by the Chromium test under CPU load (the call never became ready: every packet failed
// to decrypt). werift's DTLS client re-runs flight 5 (with a fresh ECDHE key pair) when the
// server's flight 4 is retransmitted after flight 5 went out; once the server's Finished has set
// dtls.flight to 7, Flight5.exec's `flight === 5` guard no longer catches it and the keys diverge.
// Drop a repeated flight 4 on a client that is past it; werift's own flight 5 retransmit timer
// covers loss.
//
// 2. Found at 10-20 % loss between two werift peers (issue 25). werift sends each handshake
// message of a flight in its own datagram and acts on a flight as soon as the messages it checks
// for are in, so a flight that lost one datagram is taken as whole: a client that lost the
// server's CertificateRequest answers without a certificate, the two handshake hashes differ and
// every Finished fails to decrypt until the call times out. Records a flight hands to the socket
// in one go are sent together in as few datagrams as fit (RFC 6347 §4.1.1 allows several records
// in a datagram; browsers do the same), so a flight arrives whole or not at all and is
// retransmitted whole by werift's flight timers.
//
// 3. Also at loss: once a werift server has sent its last flight (ChangeCipherSpec, Finished) it
// ignores the client's retransmitted flight 5, so a lost last flight leaves the client waiting
// forever. A server that is connected answers a retransmitted Finished with its last flight
// again (RFC 6347 §4.2.4), as Chromium's does.
import { Buffer } from "node:buffer";
import { DtlsSocket } from "werift";

const CLIENT = 1;
const SERVER = 2;
const FLIGHT4 = new Set([2, 11, 12, 13, 14]); // server_hello .. server_hello_done
const FINISHED = 20;
const FLIGHT5 = new Set([11, 15, 16, FINISHED]); // certificate .. finished
/** change_cipher_spec and handshake records: the only ones sent as flights. */
const HANDSHAKE_RECORD = new Set([20, 22]);
/** A datagram that crosses any path unfragmented (the size WebRTC stacks keep DTLS under). */
export const HANDSHAKE_DATAGRAM_BYTES = 1200;

// deno-lint-ignore no-explicit-any
const proto = DtlsSocket.prototype as any;

const handleFragmentHandshake = proto.handleFragmentHandshake;
// deno-lint-ignore no-explicit-any
proto.handleFragmentHandshake = function (this: any, messages: unknown[]) {
  // deno-lint-ignore no-explicit-any
  const out = handleFragmentHandshake.call(this, messages) as any[];
  if (this.sessionType === SERVER && this.connected) {
    if (out.some((h) => h.msg_type === FINISHED) && Array.isArray(this.dtls.lastMessage)) {
      for (const record of this.dtls.lastMessage) this.transport.send(record).catch(() => {});
    }
    // A repeated flight 5 is answered above; a ClientHello (renegotiation) still goes to werift.
    return out.filter((h) => !FLIGHT5.has(h.msg_type));
  }
  if (this.sessionType !== CLIENT || this.dtls.flight < 5) return out;
  return out.filter((h) => !FLIGHT4.has(h.msg_type));
};

// setupExtensions runs in DtlsSocket's constructor right after the transport is made: the first
// place a patch can reach each socket's transport before any flight is sent.
const setupExtensions = proto.setupExtensions;
// deno-lint-ignore no-explicit-any
proto.setupExtensions = function (this: any) {
  setupExtensions.call(this);
  const transport = this.transport as {
    send: (buf: Uint8Array, addr?: unknown) => Promise<unknown>;
  };
  transport.send = coalescing(transport.send);
};

/**
 * `send` with handshake records sent in the same tick packed into shared datagrams of at most
 * HANDSHAKE_DATAGRAM_BYTES (a record larger than that goes alone); other records pass at once.
 */
export function coalescing(
  send: (buf: Uint8Array, addr?: unknown) => Promise<unknown>,
): (buf: Uint8Array, addr?: unknown) => Promise<unknown> {
  let queued: Uint8Array[] = [];
  let flushed: Promise<unknown> | undefined;
  const flush = () => {
    const records = queued;
    queued = [];
    flushed = undefined;
    const sends: Promise<unknown>[] = [];
    let datagram: Uint8Array[] = [];
    let bytes = 0;
    const out = () => {
      if (datagram.length === 0) return;
      sends.push(send(datagram.length === 1 ? datagram[0] : concat(datagram, bytes)));
      datagram = [];
      bytes = 0;
    };
    for (const record of records) {
      if (bytes + record.length > HANDSHAKE_DATAGRAM_BYTES) out();
      datagram.push(record);
      bytes += record.length;
    }
    out();
    return Promise.all(sends);
  };
  return (buf, addr) => {
    if (addr !== undefined || !HANDSHAKE_RECORD.has(buf[0])) return send(buf, addr);
    queued.push(buf);
    flushed ??= Promise.resolve().then(flush);
    return flushed;
  };
}

function concat(parts: Uint8Array[], bytes: number): Uint8Array {
  // werift's sockets take Node Buffers.
  return Buffer.concat(parts, bytes);
}
