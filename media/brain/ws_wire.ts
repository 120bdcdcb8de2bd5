// RFC 6455 on the worker's side of a brain connection: the frames a client sends (masked), the
// close payload, and a reader that buffers a connection's bytes on demand (the socket reads a
// frame's header before deciding whether to read its payload). Used by dial.ts and socket.ts.

import { concat } from "../../common/bytes.ts";

export type Conn = Deno.TcpConn | Deno.TlsConn;

export const READ_CHUNK = 64 * 1024;

const encoder = new TextEncoder();

export { concat, writeAll } from "../../common/bytes.ts";

/** A client frame: FIN set, masked as RFC 6455 requires of clients. */
export function clientFrame(opcode: number, payload: Uint8Array): Uint8Array {
  const n = payload.length;
  const ext = n < 126 ? 0 : n < 0x10000 ? 2 : 8;
  const out = new Uint8Array(2 + ext + 4 + n);
  out[0] = 0x80 | opcode;
  if (ext === 0) out[1] = 0x80 | n;
  else if (ext === 2) {
    out[1] = 0x80 | 126;
    new DataView(out.buffer).setUint16(2, n);
  } else {
    out[1] = 0x80 | 127;
    new DataView(out.buffer).setBigUint64(2, BigInt(n));
  }
  const mask = crypto.getRandomValues(new Uint8Array(4));
  out.set(mask, 2 + ext);
  const body = 2 + ext + 4;
  for (let i = 0; i < n; i++) out[body + i] = payload[i] ^ mask[i & 3];
  return out;
}

export function closePayload(code: number, reason: string): Uint8Array {
  const text = encoder.encode(reason).subarray(0, 123);
  const out = new Uint8Array(2 + text.length);
  new DataView(out.buffer).setUint16(0, code);
  out.set(text, 2);
  return out;
}

/** Reads from a connection into a buffer on demand. */
export class Reader {
  buf: Uint8Array<ArrayBuffer> = new Uint8Array(0);
  /** When bytes last came (performance.now()): any byte shows the brain's side is alive. */
  heardAt = performance.now();
  private scratch = new Uint8Array(READ_CHUNK);
  /** Called around each wait for the network (when other tasks may run). */
  onWait = () => {};
  onResume = () => {};
  constructor(private conn: Conn) {}

  /** Waits until `n` bytes are buffered; false at the end of the stream. */
  async fill(n: number): Promise<boolean> {
    while (this.buf.length < n) {
      this.onWait();
      const got = await this.conn.read(this.scratch);
      this.onResume();
      if (got === null) return false;
      this.heardAt = performance.now();
      this.buf = concat(this.buf, this.scratch.subarray(0, got));
    }
    return true;
  }

  take(n: number): Uint8Array {
    const out = this.buf.slice(0, n);
    this.buf = this.buf.subarray(n);
    return out;
  }
}
