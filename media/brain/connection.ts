// The worker's side of the brain WebSocket: dials {brain_url}?session_id=..., numbers and
// timestamps every frame it sends, decodes every frame it gets, and logs both ways, decoded,
// in the session log.
import {
  type BrainFrameKind,
  decodeBrainFrame,
  encodeServiceFrame,
  type Frame,
  type ServiceFrameKind,
} from "../../proto/frames.ts";

export type BrainFrame = Frame<BrainFrameKind>;

export interface FrameLog {
  add(source: string, kind: string, data?: unknown): void;
}

export interface BrainConnectionOptions {
  /** Give up dialling after this long. */
  dialTimeoutMs?: number;
  log: FrameLog;
  onFrame(frame: BrainFrame): void;
  /** A frame that could not be decoded: the brain broke the protocol. */
  onProtocolError(reason: string): void;
  /** The socket closed without this side closing it. */
  onClosed(code: number, reason: string): void;
}

/** The URL the worker dials for a session. */
export function brainDialUrl(brainUrl: string, sessionId: string): string {
  const url = new URL(brainUrl);
  url.searchParams.set("session_id", sessionId);
  return url.toString();
}

export class BrainConnection {
  private seq = 0;
  private closing = false;

  private constructor(private ws: WebSocket, private opts: BrainConnectionOptions) {
    ws.onmessage = (ev) => this.receive(ev.data);
    ws.onclose = (ev) => {
      if (!this.closing) opts.onClosed(ev.code, ev.reason);
    };
  }

  /** Opens the socket; rejects when the brain cannot be reached in time. */
  static dial(
    brainUrl: string,
    sessionId: string,
    opts: BrainConnectionOptions,
  ): Promise<BrainConnection> {
    return new Promise((resolve, reject) => {
      let ws: WebSocket;
      try {
        ws = new WebSocket(brainDialUrl(brainUrl, sessionId));
      } catch (err) {
        reject(new Error(`bad brain URL: ${(err as Error).message}`));
        return;
      }
      ws.binaryType = "arraybuffer";
      const timer = setTimeout(() => {
        ws.onopen = ws.onerror = ws.onclose = null;
        ws.close();
        reject(new Error("the brain did not answer in time"));
      }, opts.dialTimeoutMs ?? 5000);
      ws.onopen = () => {
        clearTimeout(timer);
        ws.onerror = null;
        resolve(new BrainConnection(ws, opts));
      };
      ws.onerror = (ev) => {
        clearTimeout(timer);
        ws.onclose = null;
        reject(
          new Error(`the brain could not be reached: ${(ev as ErrorEvent).message ?? "error"}`),
        );
      };
    });
  }

  get open(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  /** Sends one frame; a closed socket drops it (the call is ending anyway). */
  send(kind: ServiceFrameKind, body: Record<string, unknown>): void {
    if (!this.open) return;
    const seq = ++this.seq;
    this.ws.send(encodeServiceFrame(seq, kind, body));
    this.opts.log.add("to_brain", kind, { seq, ...body });
  }

  private receive(data: unknown): void {
    if (!(data instanceof ArrayBuffer)) {
      this.opts.log.add("from_brain", "text_frame", { text: String(data).slice(0, 200) });
      this.opts.onProtocolError("the brain sent a text frame; frames are binary protobuf");
      return;
    }
    let frame: BrainFrame;
    try {
      frame = decodeBrainFrame(new Uint8Array(data));
    } catch (err) {
      this.opts.log.add("from_brain", "undecodable", { bytes: data.byteLength });
      this.opts.onProtocolError(`undecodable frame: ${(err as Error).message}`);
      return;
    }
    this.opts.log.add("from_brain", frame.kind, {
      seq: frame.seq,
      timestamp_ms: frame.timestamp_ms,
      ...frame.body,
    });
    this.opts.onFrame(frame);
  }

  /** Closes the socket and waits (briefly) for the close handshake. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    if (this.ws.readyState === WebSocket.CLOSED) return;
    const closed = new Promise<void>((r) => {
      this.ws.onclose = () => r();
    });
    this.ws.close(1000, "call ended");
    let t: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([closed, new Promise<void>((r) => (t = setTimeout(r, 1000)))]);
    clearTimeout(t);
  }
}
