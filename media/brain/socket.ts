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
import { dialBrain, type DialOptions } from "./dial.ts";
import {
  clientFrame,
  closePayload,
  concat,
  type Conn,
  READ_CHUNK,
  type Reader,
  writeAll,
} from "./ws_wire.ts";

export { BrainDialError, type DialFailure, type DialOptions } from "./dial.ts";

const log = logger("brain-socket");
/** Longest run of frame handling before the reader lets timers and I/O run. */
const YIELD_AFTER_MS = 4;

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
    const { conn, reader } = await dialBrain(url, opts);
    return new BrainSocket(conn, reader, opts.maxFrameBytes);
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
      const whole = message.length === 1 ? message[0] : concat(...message);
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
