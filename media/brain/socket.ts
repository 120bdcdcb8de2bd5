// The worker's WebSocket client for the brain (RFC 6455 over Deno.connect / Deno.startTls).
//
// Not Deno's WebSocket, for three reasons measured with it (deno 2.9.6): it buffers a whole
// message before any code sees it and only gives up at 64 MiB ("Frame too large", after +200 MB
// of RSS for one such message), so no size limit of ours could act before the buffering; it
// cannot tell a refused connection from a handshake that never completes; and it hands over a
// flood of frames as fast as they come. Here a frame's header is read first and a frame larger
// than `maxFrameBytes` is refused before its payload is read (the socket is closed with 1009);
// dialling fails as `brain_unreachable` or `brain_connect_timeout`; and after a few ms of frames
// the reader yields to the event loop (and reads no more meanwhile, so TCP slows the brain down),
// which keeps every call's 20 ms audio ticks on time. Being our own client, it can also send
// pings (which Deno's cannot), so a brain that goes silent with its connection open is found
// (liveness.ts).

import { logger } from "../../common/log.ts";

const log = logger("brain-socket");
const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
const READ_CHUNK = 64 * 1024;
/** Longest run of frame handling before the reader lets timers and I/O run. */
const YIELD_AFTER_MS = 4;
/** Largest HTTP response head the handshake reads. */
const MAX_HEAD_BYTES = 16 * 1024;

export type DialFailure = "brain_unreachable" | "brain_connect_timeout";

/** The brain could not be dialled: `reason` is the call's end reason. */
export class BrainDialError extends Error {
  constructor(readonly reason: DialFailure, message: string) {
    super(message);
    this.name = "BrainDialError";
  }
}

/** The brain broke the WebSocket framing: a frame over the limit, or one RFC 6455 forbids. */
export class FrameViolation extends Error {
  constructor(readonly kind: "too_large" | "bad_frame", message: string, readonly bytes = 0) {
    super(message);
    this.name = "FrameViolation";
  }
}

export interface BrainSocketEvents {
  /** A whole message: bytes for a binary one, a string for a text one. */
  message(data: Uint8Array | string): void;
  /**
   * The brain broke the framing: nothing more is read, `closed` will not follow, but frames may
   * still be sent (a Finalize and End saying why) before close(), which should then be given
   * `violationCode`. Without a close() within 2 s the connection goes anyway.
   */
  violation(err: FrameViolation): void;
  /** The socket closed without this side closing it: the brain's close code, or 1006 for none. */
  closed(code: number, reason: string): void;
}

export interface DialOptions {
  /** TCP connect plus the WebSocket handshake must be done within this. */
  timeoutMs: number;
  /** Largest message accepted (a fragmented message counts whole). */
  maxFrameBytes: number;
  /** For wss://: CA certificates (PEM) trusted besides the process's store (DENO_CERT, system). */
  caCerts?: string[];
}

type Conn = Deno.TcpConn | Deno.TlsConn;

const encoder = new TextEncoder();

function concat(a: Uint8Array, b: Uint8Array): Uint8Array<ArrayBuffer> {
  if (a.length === 0) return b.slice();
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

async function writeAll(conn: Conn, bytes: Uint8Array): Promise<void> {
  let off = 0;
  while (off < bytes.length) off += await conn.write(bytes.subarray(off));
}

function base64(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes));
}

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

function closePayload(code: number, reason: string): Uint8Array {
  const text = encoder.encode(reason).subarray(0, 123);
  const out = new Uint8Array(2 + text.length);
  new DataView(out.buffer).setUint16(0, code);
  out.set(text, 2);
  return out;
}

/** Reads from a connection into a buffer on demand. */
class Reader {
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

interface Target {
  tls: boolean;
  hostname: string;
  port: number;
  /** The Host header. */
  host: string;
  /** Path and query of the request line. */
  path: string;
}

function targetOf(url: string): Target {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new BrainDialError("brain_unreachable", `bad brain URL: ${url}`);
  }
  if (u.protocol !== "ws:" && u.protocol !== "wss:") {
    throw new BrainDialError(
      "brain_unreachable",
      `a brain URL is ws:// or wss://, not ${u.protocol}`,
    );
  }
  const tls = u.protocol === "wss:";
  const hostname = u.hostname.replace(/^\[(.*)\]$/, "$1");
  return {
    tls,
    hostname,
    port: u.port ? Number(u.port) : tls ? 443 : 80,
    host: u.host,
    path: (u.pathname || "/") + u.search,
  };
}

/** Sends the upgrade request and checks the 101 answer; returns bytes read past its head. */
async function handshake(conn: Conn, reader: Reader, target: Target): Promise<void> {
  const key = base64(crypto.getRandomValues(new Uint8Array(16)));
  const request = `GET ${target.path} HTTP/1.1\r\nHost: ${target.host}\r\n` +
    "Upgrade: websocket\r\nConnection: Upgrade\r\n" +
    `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`;
  await writeAll(conn, encoder.encode(request));
  let end = -1;
  while (end < 0) {
    if (!await reader.fill(reader.buf.length + 1)) {
      throw new Error("the brain closed the connection during the WebSocket handshake");
    }
    end = indexOfHeadEnd(reader.buf);
    if (end < 0 && reader.buf.length > MAX_HEAD_BYTES) {
      throw new Error("the brain's handshake answer is not HTTP");
    }
  }
  const head = new TextDecoder().decode(reader.take(end + 4)).split("\r\n");
  const status = /^HTTP\/1\.1 (\d{3})/.exec(head[0]);
  if (!status) throw new Error(`the brain's handshake answer is not HTTP: ${head[0].slice(0, 80)}`);
  if (status[1] !== "101") {
    throw new Error(`the brain answered HTTP ${status[1]}, not a WebSocket upgrade`);
  }
  const headers = new Map<string, string>();
  for (const line of head.slice(1)) {
    const colon = line.indexOf(":");
    if (colon > 0) {
      headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
  }
  const digest = await crypto.subtle.digest("SHA-1", encoder.encode(key + GUID));
  if (headers.get("sec-websocket-accept") !== base64(new Uint8Array(digest))) {
    throw new Error("the brain's handshake answer has a wrong Sec-WebSocket-Accept");
  }
  if (headers.get("upgrade")?.toLowerCase() !== "websocket") {
    throw new Error("the brain's handshake answer does not upgrade to websocket");
  }
  if (headers.has("sec-websocket-extensions")) {
    throw new Error("the brain accepted a WebSocket extension that was not offered");
  }
}

function indexOfHeadEnd(b: Uint8Array): number {
  for (let i = 0; i + 3 < b.length; i++) {
    if (b[i] === 13 && b[i + 1] === 10 && b[i + 2] === 13 && b[i + 3] === 10) return i;
  }
  return -1;
}

export class BrainSocket {
  private state: "open" | "closing" | "closed" = "open";
  /** The brain broke the framing: reading stopped; set to the close code that says why. */
  violationCode?: 1009 | 1002;
  private violationTimer?: ReturnType<typeof setTimeout>;
  /** The longest the reader held the event loop: frames handled between two waits, in ms. */
  longestRunMs = 0;
  private runStart = performance.now();
  private writing: Promise<void> = Promise.resolve();
  private events?: BrainSocketEvents;
  private readerDone: Promise<void> = Promise.resolve();

  private constructor(
    private conn: Conn,
    private reader: Reader,
    private maxFrameBytes: number,
  ) {
    reader.onWait = () => this.endRun();
    reader.onResume = () => (this.runStart = performance.now());
  }

  private endRun(): void {
    this.longestRunMs = Math.max(this.longestRunMs, performance.now() - this.runStart);
  }

  /** Dials `url`; rejects with BrainDialError naming why the brain cannot be used. */
  static async dial(url: string, opts: DialOptions): Promise<BrainSocket> {
    const target = targetOf(url);
    const abort = new AbortController();
    let conn: Conn | undefined;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      abort.abort();
      try {
        conn?.close();
      } catch { /* closed already */ }
    }, opts.timeoutMs);
    try {
      const tcp = await Deno.connect({
        hostname: target.hostname,
        port: target.port,
        signal: abort.signal,
      });
      conn = tcp;
      if (timedOut) throw new Error("timed out");
      if (target.tls) {
        conn = undefined; // startTls takes the TCP connection over
        const tls = Deno.startTls(tcp, { hostname: target.hostname, caCerts: opts.caCerts });
        conn = await Promise.race([
          tls,
          new Promise<never>((_, reject) =>
            abort.signal.addEventListener("abort", () => {
              tls.then((c) => c.close(), () => {});
              reject(new Error("timed out"));
            }, { once: true })
          ),
        ]);
      }
      const reader = new Reader(conn);
      await handshake(conn, reader, target);
      if (timedOut) throw new Error("timed out");
      return new BrainSocket(conn, reader, opts.maxFrameBytes);
    } catch (err) {
      try {
        conn?.close();
      } catch { /* closed already */ }
      if (timedOut) {
        throw new BrainDialError(
          "brain_connect_timeout",
          `the brain did not complete the WebSocket handshake within ${opts.timeoutMs} ms`,
        );
      }
      if (err instanceof BrainDialError) throw err;
      throw new BrainDialError(
        "brain_unreachable",
        `the brain could not be reached: ${(err as Error).message}`,
      );
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Where messages and the end go; reading starts here (frames that came with the handshake
   * answer wait for it, so none is handed to nobody).
   */
  listen(events: BrainSocketEvents): void {
    if (this.events) throw new Error("a brain socket is listened to once");
    this.events = events;
    this.readerDone = this.readLoop();
  }

  get open(): boolean {
    return this.state === "open";
  }

  /** When the brain last sent any byte (performance.now()), pongs and partial frames included. */
  get heardAt(): number {
    return this.reader.heardAt;
  }

  /** Sends a ping (RFC 6455 §5.5.2): the brain's WebSocket must answer it with a pong. */
  ping(payload: Uint8Array = new Uint8Array()): void {
    if (this.state !== "open") return;
    this.write(clientFrame(0x9, payload));
  }

  /** Sends one binary message; dropped once the socket is closing. */
  send(bytes: Uint8Array): void {
    if (this.state !== "open") return;
    this.write(clientFrame(0x2, bytes));
  }

  /** Closes with `code` after what was sent is written, waiting (at most `waitMs`) for the brain's close. */
  async close(code = 1000, reason = "", waitMs = 1000): Promise<void> {
    if (this.state !== "open") {
      await this.readerDone;
      return;
    }
    this.state = "closing";
    this.write(clientFrame(0x8, closePayload(code, reason)));
    // After a violation nothing is parsed any more: the brain's close frame cannot be seen.
    if (this.violationCode === undefined) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        this.readerDone,
        new Promise<void>((r) => (timer = setTimeout(r, waitMs))),
      ]);
      clearTimeout(timer);
    }
    await this.shutdown();
  }

  private write(frame: Uint8Array): void {
    this.writing = this.writing.then(() => writeAll(this.conn, frame)).catch(() => {});
  }

  /** Lets queued writes go out (briefly), then closes the connection; the reader then ends. */
  private async shutdown(): Promise<void> {
    if (this.state === "closed") return;
    this.state = "closed";
    clearTimeout(this.violationTimer);
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([this.writing, new Promise<void>((r) => (timer = setTimeout(r, 200)))]);
    clearTimeout(timer);
    try {
      this.conn.close();
    } catch { /* closed already */ }
    await this.readerDone;
  }

  /** The brain broke the framing: reading stops; the owner says goodbye and closes. */
  private refuse(err: FrameViolation): void {
    if (this.state !== "open") return;
    this.violationCode = err.kind === "too_large" ? 1009 : 1002;
    this.violationTimer = setTimeout(() => this.close(this.violationCode, err.kind), 2000);
    this.events?.violation(err);
  }

  /** The brain's side ended (close frame, end of stream, or an error) while this side was open. */
  private lost(code: number, reason: string): void {
    if (this.state !== "open") return;
    this.state = "closing";
    this.shutdown();
    this.events?.closed(code, reason);
  }

  private async readLoop(): Promise<void> {
    try {
      await this.frames();
    } catch (err) {
      if (!(err instanceof FrameViolation)) return this.lost(1006, (err as Error).message ?? "");
      this.refuse(err);
      // What the brain still sends is read and dropped (nothing is kept), so that closing does
      // not reset the connection under the goodbye frames still on their way out.
      const scratch = new Uint8Array(READ_CHUNK);
      while (await this.conn.read(scratch).catch(() => null) !== null) { /* dropped */ }
    }
  }

  private async frames(): Promise<void> {
    const r = this.reader;
    let message: Uint8Array[] = [];
    let messageBytes = 0;
    let messageOpcode = 0;
    for (;;) {
      if (performance.now() - this.runStart > YIELD_AFTER_MS) {
        this.endRun();
        await new Promise((res) => setTimeout(res, 0));
        this.runStart = performance.now();
      }
      if (this.state === "closed") return;
      if (!await r.fill(2)) return this.lost(1006, "");
      const b0 = r.buf[0], b1 = r.buf[1];
      const fin = (b0 & 0x80) !== 0;
      const opcode = b0 & 0x0f;
      const masked = (b1 & 0x80) !== 0;
      const len7 = b1 & 0x7f;
      const ext = len7 === 126 ? 2 : len7 === 127 ? 8 : 0;
      const head = 2 + ext + (masked ? 4 : 0);
      if (!await r.fill(head)) return this.lost(1006, "");
      const view = new DataView(r.buf.buffer, r.buf.byteOffset, head);
      const length = ext === 2
        ? view.getUint16(2)
        : ext === 8
        ? Number(view.getBigUint64(2))
        : len7;
      if (b0 & 0x70) throw new FrameViolation("bad_frame", "a frame has reserved bits set");
      if (masked) throw new FrameViolation("bad_frame", "a frame from the brain is masked");
      const control = opcode >= 0x8;
      if (control) {
        if (!fin || length > 125) {
          throw new FrameViolation("bad_frame", "a control frame is fragmented or too long");
        }
        if (opcode > 0xa) throw new FrameViolation("bad_frame", `unknown opcode ${opcode}`);
      } else {
        if (opcode > 0x2) throw new FrameViolation("bad_frame", `unknown opcode ${opcode}`);
        if (opcode === 0 && messageOpcode === 0) {
          throw new FrameViolation("bad_frame", "a continuation frame starts no message");
        }
        if (opcode !== 0 && messageOpcode !== 0) {
          throw new FrameViolation("bad_frame", "a new message inside a fragmented one");
        }
        // The limit acts on the header's length: the payload is never read.
        if (messageBytes + length > this.maxFrameBytes) {
          throw new FrameViolation(
            "too_large",
            `a frame of ${messageBytes + length} bytes is over the ${this.maxFrameBytes} limit`,
            messageBytes + length,
          );
        }
      }
      if (!await r.fill(head + length)) return this.lost(1006, "");
      r.take(head);
      const payload = r.take(length);
      if (control) {
        if (opcode === 0x8) return this.onClose(payload);
        if (opcode === 0x9 && this.state === "open") this.write(clientFrame(0xa, payload));
        continue;
      }
      if (opcode !== 0) messageOpcode = opcode;
      message.push(payload);
      messageBytes += length;
      if (!fin) continue;
      const whole = message.length === 1 ? message[0] : message.reduce(concat);
      const kind = messageOpcode;
      message = [];
      messageBytes = 0;
      messageOpcode = 0;
      if (this.state !== "open") continue;
      let data: Uint8Array | string = whole;
      if (kind === 0x1) {
        try {
          data = new TextDecoder("utf-8", { fatal: true }).decode(whole);
        } catch {
          throw new FrameViolation("bad_frame", "a text frame is not UTF-8");
        }
      }
      try {
        this.events?.message(data);
      } catch (err) {
        // Our handler's fault, not the brain's: the socket goes on.
        log.error("a brain message handler failed", { cause: (err as Error).stack ?? String(err) });
      }
    }
  }

  private onClose(payload: Uint8Array): void {
    const code = payload.length >= 2
      ? new DataView(payload.buffer, payload.byteOffset).getUint16(0)
      : 1005;
    const reason = new TextDecoder().decode(payload.subarray(2));
    if (this.state === "open") {
      // The brain closed first: echo its close, then the connection goes.
      this.write(clientFrame(0x8, payload.length >= 2 ? payload.subarray(0, 2) : new Uint8Array()));
      this.lost(code, reason);
    }
  }
}
