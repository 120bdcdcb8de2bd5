// Cutting a TCP byte stream into SIP messages (RFC 3261 section 18.3): the headers end at the
// first blank line and Content-Length says how much body follows. A message without one, or a
// head too large, leaves the stream unframeable: the connection must close.
import { headEnd, parseMessage, type ParseResult } from "./message.ts";

/** A head larger than this is refused: nothing a trunk sends comes near it. */
export const MAX_HEAD_BYTES = 16 * 1024;
/** Bodies (SDP) larger than this are refused the same way. */
export const MAX_BODY_BYTES = 64 * 1024;

/**
 * The status a message the framer gave up on is answered with: a body over MAX_BODY_BYTES is 413
 * (RFC 3261 section 21.4.11), a head over MAX_HEAD_BYTES 513 Message Too Large (21.5.9); any
 * other fault (no Content-Length) is the request's own: undefined, a 400 naming it.
 */
export function refusalStatus(reason: string): 413 | 513 | undefined {
  if (reason === "body too large") return 413;
  if (reason === "headers too large") return 513;
  return undefined;
}

/**
 * What a listener answers for a stream the framer gave up on (`reason`, with what was read): too
 * large (413, 513) is answered from the head whatever it says of the body; any other fault is the
 * message's own parse, or a 400 naming `reason` when the message itself parsed.
 */
export function refusedStream(reason: string, bytes: Uint8Array): ParseResult {
  const parsed = parseMessage(bytes, true);
  const status = refusalStatus(reason);
  const partial = parsed.ok ? parsed.message : parsed.partial;
  return parsed.ok || status ? { ok: false, reason, partial, status } : parsed;
}

export type Framed =
  | { kind: "message"; bytes: Uint8Array }
  /** A CRLFCRLF keep-alive ping (RFC 5626 section 3.5.1), answered with CRLF. */
  | { kind: "ping" }
  /** The stream cannot be framed any more; `bytes` is what was read, for a 400 if it parses. */
  | { kind: "broken"; reason: string; bytes: Uint8Array };

const LENGTH = /^(?:content-length|l)[ \t]*:[ \t]*(\d+)[ \t]*$/im;

export class SipStreamFramer {
  private buffer = new Uint8Array(0);
  private broken = false;

  /** Bytes held of a message not yet complete (0 between messages). */
  get buffered(): number {
    return this.buffer.length;
  }

  /** Adds `chunk` and returns every message now complete, in order. */
  push(chunk: Uint8Array): Framed[] {
    if (this.broken) return [];
    const joined = new Uint8Array(this.buffer.length + chunk.length);
    joined.set(this.buffer);
    joined.set(chunk, this.buffer.length);
    this.buffer = joined;
    const out: Framed[] = [];
    for (;;) {
      if (this.buffer[0] === 13 && this.buffer[1] === 10) {
        if (this.buffer.length < 4) break;
        const ping = this.buffer[2] === 13 && this.buffer[3] === 10;
        this.buffer = this.buffer.subarray(ping ? 4 : 2);
        if (ping) out.push({ kind: "ping" });
        continue;
      }
      const end = headEnd(this.buffer);
      if (end < 0) {
        if (this.buffer.length > MAX_HEAD_BYTES) out.push(this.break("headers too large"));
        break;
      }
      const head = new TextDecoder().decode(this.buffer.subarray(0, end));
      const m = LENGTH.exec(head);
      if (!m) {
        out.push(this.break("Content-Length is required over TCP", end + 4));
        break;
      }
      const length = Number(m[1]);
      if (length > MAX_BODY_BYTES) {
        out.push(this.break("body too large", end + 4));
        break;
      }
      const total = end + 4 + length;
      if (this.buffer.length < total) break;
      out.push({ kind: "message", bytes: this.buffer.slice(0, total) });
      this.buffer = this.buffer.subarray(total);
    }
    return out;
  }

  private break(reason: string, upTo = this.buffer.length): Framed {
    this.broken = true;
    const bytes = this.buffer.slice(0, upTo);
    this.buffer = new Uint8Array(0);
    return { kind: "broken", reason, bytes };
  }
}
