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
import type { SessionEventWriter } from "../../common/session_events.ts";
import { BrainDialError, BrainSocket, type DialFailure, type FrameViolation } from "./socket.ts";
import { BrainLiveness } from "./liveness.ts";

export { BrainDialError } from "./socket.ts";

/** Why a dial failed, as the call's end reason. */
export function dialFailure(err: unknown): DialFailure {
  return err instanceof BrainDialError ? err.reason : "brain_unreachable";
}

export type BrainFrame = Frame<BrainFrameKind>;

/**
 * What the brain did that ends the call: a frame that is not the protocol, one too big, or
 * nothing at all (not even a pong) for `unresponsiveMs`.
 */
export type BrainViolation =
  | "brain_protocol_error"
  | "brain_frame_too_large"
  | "brain_unresponsive";

export interface BrainConnectionOptions {
  /** Give up dialling (TCP and the WebSocket handshake) after this long. */
  dialTimeoutMs?: number;
  /** Largest message the brain may send, in bytes. */
  maxFrameBytes?: number;
  /**
   * Nothing from the brain for this long (pings unanswered) ends the call `brain_unresponsive`;
   * 0 never does. See liveness.ts.
   */
  unresponsiveMs?: number;
  log: SessionEventWriter;
  onFrame(frame: BrainFrame): void;
  /** The brain has been silent, pings unanswered, and the call ends in `leftMs` unless it speaks. */
  onSilent?(detail: string, leftMs: number): void;
  /** The brain broke the protocol (`reason` is the call's end reason). */
  onViolation(reason: BrainViolation, detail: string): void;
  /** The socket closed without this side closing it. */
  onClosed(code: number, reason: string): void;
}

const seconds = (ms: number) => (ms / 1000).toFixed(1);

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
  /** The brain sent nothing for the whole bound: no close frame is to be waited for. */
  private unresponsive = false;
  private liveness: BrainLiveness;

  private constructor(private socket: BrainSocket, private opts: BrainConnectionOptions) {
    this.liveness = new BrainLiveness(opts.unresponsiveMs ?? 0, {
      heardAt: () => socket.heardAt,
      ping: () => socket.ping(),
      silent: (silentMs, leftMs) => {
        const detail = `the brain has sent nothing for ${seconds(silentMs)} s (pings unanswered)`;
        opts.log.add("worker", "brain_silent", { silent_ms: Math.round(silentMs) });
        opts.onSilent?.(
          `${detail}; the call ends in ${seconds(leftMs)} s unless it answers`,
          leftMs,
        );
      },
      back: (silentMs) => opts.log.add("worker", "brain_back", { silent_ms: Math.round(silentMs) }),
      unresponsive: (silentMs) => {
        this.unresponsive = true;
        opts.onViolation(
          "brain_unresponsive",
          `the brain sent nothing, not even a pong, for ${seconds(silentMs)} s`,
        );
      },
    });
    socket.listen({
      message: (data) => this.receive(data),
      violation: (err) => {
        this.liveness.stop();
        this.violation(err);
      },
      closed: (code, reason) => {
        this.liveness.stop();
        opts.onClosed(code, reason);
      },
    });
    this.liveness.start();
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

  /**
   * Sends one frame; a closed socket drops it (the call is ending anyway). `logged` is what the
   * record keeps of the body when it must not keep all of it (a sensitive key's digit).
   */
  send(kind: ServiceFrameKind, body: Record<string, unknown>, logged = body): void {
    if (!this.open) return;
    const seq = ++this.seq;
    this.socket.send(encodeServiceFrame(seq, kind, body));
    this.opts.log.add("to_brain", kind, { seq, ...logged });
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
    this.liveness.stop();
    const code = this.socket.violationCode ?? (this.violated ? 1002 : 1000);
    // A brain that sent nothing for the whole bound will not send its close frame either.
    const waitMs = this.unresponsive ? 0 : 1000;
    const reason = code !== 1000
      ? "protocol error"
      : this.unresponsive
      ? "brain unresponsive"
      : "call ended";
    return this.socket.close(code, reason, waitMs);
  }
}
