// A brain for fault tests, without the SDK: a WebSocket route that hands each call's socket to a
// script, which can send well-formed BrainFrames, raw bytes, text, oversized frames, or close.
// Every ServiceFrame the worker sends is decoded and kept, in order.
import {
  type BrainFrameKind,
  decodeServiceFrame,
  encodeBrainFrame,
  type Frame,
  type ServiceFrameKind,
} from "../../proto/frames.ts";
import type { ServedBrain, ServeOptions } from "../../sdk/brain/mod.ts";

export type ServiceFrame = Frame<ServiceFrameKind>;

export class RawBrainCall {
  readonly frames: ServiceFrame[] = [];
  /** Resolves with the close code the worker's socket ended with. */
  readonly closed: Promise<number>;
  private seq = 0;
  private wake = () => {};
  private changed = new Promise<void>((r) => (this.wake = r));

  constructor(readonly socket: WebSocket, readonly sessionId: string) {
    socket.binaryType = "arraybuffer";
    socket.addEventListener("message", (e) => {
      if (e.data instanceof ArrayBuffer) {
        this.frames.push(decodeServiceFrame(new Uint8Array(e.data)));
      }
      this.bump();
    });
    this.closed = new Promise((resolve) =>
      socket.addEventListener("close", (e) => {
        resolve(e.code);
        this.bump();
      })
    );
    socket.addEventListener("error", () => {});
  }

  private bump() {
    this.wake();
    this.changed = new Promise<void>((r) => (this.wake = r));
  }

  get open(): boolean {
    return this.socket.readyState === WebSocket.OPEN;
  }

  /** One BrainFrame, numbered. */
  send(kind: BrainFrameKind, body: Record<string, unknown>): void {
    if (this.open) this.socket.send(encodeBrainFrame(++this.seq, kind, body));
  }

  /** Bytes or text as they are. */
  sendRaw(data: Uint8Array | string): void {
    if (this.open) this.socket.send(data);
  }

  /** The first ServiceFrame of `kind` (received or to come) matching `match`. */
  async next(
    kind: ServiceFrameKind,
    match: (f: ServiceFrame) => boolean = () => true,
    ms = 15_000,
  ): Promise<ServiceFrame> {
    const until = performance.now() + ms;
    for (;;) {
      const hit = this.frames.find((f) => f.kind === kind && match(f));
      if (hit) return hit;
      const left = until - performance.now();
      if (left <= 0) {
        throw new Error(`no ${kind} from the worker; got ${this.frames.map((f) => f.kind)}`);
      }
      let t: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([this.changed, new Promise((r) => (t = setTimeout(r, left)))]);
      clearTimeout(t);
    }
  }

  close(code = 1000, reason = ""): void {
    try {
      this.socket.close(code, reason);
    } catch { /* closed */ }
  }
}

/**
 * A brain served with Deno.serve whose calls run `script` (each call's socket, once open).
 * `calls` lists every call in dial order.
 */
export function rawBrain(script: (call: RawBrainCall) => void | Promise<void>) {
  const calls: RawBrainCall[] = [];
  const serve = (options: ServeOptions = {}): ServedBrain => {
    const hostname = options.hostname ?? "127.0.0.1";
    const server = Deno.serve(
      { hostname, port: options.port ?? 0, onListen: () => {} },
      (request) => {
        const url = new URL(request.url);
        if (options.path && url.pathname !== options.path) {
          return new Response("not found", { status: 404 });
        }
        const { socket, response } = Deno.upgradeWebSocket(request);
        const call = new RawBrainCall(socket, url.searchParams.get("session_id") ?? "");
        calls.push(call);
        socket.addEventListener("open", () => {
          Promise.resolve(script(call)).catch((err) => console.error("raw brain script:", err));
        });
        return response;
      },
    );
    const port = server.addr.port;
    return {
      url: `ws://${hostname}:${port}${options.path ?? "/"}`,
      hostname,
      port,
      finished: server.finished,
      async shutdown() {
        for (const c of calls) c.close(1001, "brain stopping");
        await server.shutdown();
      },
    };
  };
  /** The call of `sessionId`, once the worker has dialled it. */
  const callOf = async (sessionId: string, ms = 10_000): Promise<RawBrainCall> => {
    const until = performance.now() + ms;
    for (;;) {
      const call = calls.find((c) => c.sessionId === sessionId);
      if (call) return call;
      if (performance.now() > until) throw new Error(`the worker never dialled ${sessionId}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return { serve, calls, callOf };
}

/** A well-formed BrainFrame as bytes (to send with sendRaw, e.g. oversized). */
export function brainFrameBytes(kind: BrainFrameKind, body: Record<string, unknown>): Uint8Array {
  return encodeBrainFrame(1, kind, body);
}
