// The worker's side of the brain WebSocket: dials {brain_url}?session_id=..., numbers and
// timestamps every frame it sends, decodes every frame it gets, and logs both ways, decoded,
// in the session log. What the brain does wrong is named with the call's end reason.
import {
  type BrainFrameKind,
  decodeBrainFrame,
  encodeServiceFrame,
  type Frame,
  type ServiceFrameKind,
} from "../../proto/frames.ts";
import { BrainSocket, type FrameViolation } from "./socket.ts";

export { BrainDialError } from "./socket.ts";

export type BrainFrame = Frame<BrainFrameKind>;

/** What the brain did that ends the call: a frame that is not the protocol, or one too big. */
export type BrainViolation = "brain_protocol_error" | "brain_frame_too_large";

export interface FrameLog {
  add(source: string, kind: string, data?: unknown): void;
}

export interface BrainConnectionOptions {
  /** Give up dialling (TCP and the WebSocket handshake) after this long. */
  dialTimeoutMs?: number;
  /** Largest message the brain may send, in bytes. */
  maxFrameBytes?: number;
  log: FrameLog;
  onFrame(frame: BrainFrame): void;
  /** The brain broke the protocol (`reason` is the call's end reason). */
  onViolation(reason: BrainViolation, detail: string): void;
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
  /** The brain broke the protocol (a frame that decoded to nothing, text). */
  private violated = false;

  private constructor(private socket: BrainSocket, private opts: BrainConnectionOptions) {
    socket.listen({
      message: (data) => this.receive(data),
      violation: (err) => this.violation(err),
      closed: (code, reason) => opts.onClosed(code, reason),
    });
  }

  /** Opens the socket; rejects with a BrainDialError (its `reason`: unreachable or timed out). */
  static async dial(
    brainUrl: string,
    sessionId: string,
    opts: BrainConnectionOptions,
  ): Promise<BrainConnection> {
    let url: string;
    try {
      url = brainDialUrl(brainUrl, sessionId);
    } catch {
      url = brainUrl; // BrainSocket names what is wrong with it
    }
    const socket = await BrainSocket.dial(url, {
      timeoutMs: opts.dialTimeoutMs ?? 5000,
      maxFrameBytes: opts.maxFrameBytes ?? 64 * 1024,
    });
    return new BrainConnection(socket, opts);
  }

  get open(): boolean {
    return this.socket.open;
  }

  /** The longest the brain's frames held the event loop in one go, in ms. */
  get longestRunMs(): number {
    return this.socket.longestRunMs;
  }

  /** Sends one frame; a closed socket drops it (the call is ending anyway). */
  send(kind: ServiceFrameKind, body: Record<string, unknown>): void {
    if (!this.open) return;
    const seq = ++this.seq;
    this.socket.send(encodeServiceFrame(seq, kind, body));
    this.opts.log.add("to_brain", kind, { seq, ...body });
  }

  private receive(data: Uint8Array | string): void {
    if (typeof data === "string") {
      this.opts.log.add("from_brain", "text_frame", { text: data.slice(0, 200) });
      this.violated = true;
      this.opts.onViolation(
        "brain_protocol_error",
        "the brain sent a text frame; frames are binary protobuf",
      );
      return;
    }
    let frame: BrainFrame;
    try {
      frame = decodeBrainFrame(data);
    } catch (err) {
      this.opts.log.add("from_brain", "undecodable", { bytes: data.byteLength });
      this.violated = true;
      this.opts.onViolation("brain_protocol_error", `undecodable frame: ${(err as Error).message}`);
      return;
    }
    this.opts.log.add("from_brain", frame.kind, {
      seq: frame.seq,
      timestamp_ms: frame.timestamp_ms,
      ...frame.body,
    });
    this.opts.onFrame(frame);
  }

  private violation(err: FrameViolation): void {
    if (err.kind === "too_large") {
      this.opts.log.add("from_brain", "frame_too_large", {
        bytes: err.bytes,
        limit: this.opts.maxFrameBytes ?? 64 * 1024,
      });
      this.opts.onViolation("brain_frame_too_large", err.message);
    } else {
      this.opts.log.add("from_brain", "bad_frame", { error: err.message });
      this.opts.onViolation("brain_protocol_error", err.message);
    }
  }

  /**
   * Closes the socket (after what was sent) and waits, briefly, for the brain's close: 1009 after
   * a frame over the limit, 1002 after any other protocol error, else 1000.
   */
  close(): Promise<void> {
    const code = this.socket.violationCode ?? (this.violated ? 1002 : 1000);
    return this.socket.close(code, code === 1000 ? "call ended" : "protocol error");
  }
}
