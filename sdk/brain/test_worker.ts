// The worker's side of the brain socket, for tests: encodes ServiceFrames and decodes
// BrainFrames straight from proto/mod.ts, independently of the SDK's own codec.
import { BrainFrameType, ServiceFrameType } from "../../proto/mod.ts";
import { type BrainHandlers, createBrain } from "./mod.ts";

/** A decoded BrainFrame: `frame` names the body, e.g. `{ frame: "greeting", greeting: {...} }`. */
export type BrainFrame = Record<string, unknown> & {
  seq: number;
  timestamp_ms: number;
  frame: string;
};

/** How long `next` waits before failing the test instead of hanging it. */
const GIVE_UP_MS = 5000;

export class TestWorker {
  private seq = 0;
  private readonly frames: BrainFrame[] = [];
  private waiters: ((f: BrainFrame) => void)[] = [];
  /** Resolves when the socket has closed (from either side). */
  readonly closed: Promise<void>;

  private constructor(private readonly ws: WebSocket) {
    ws.binaryType = "arraybuffer";
    ws.addEventListener("message", (e) => {
      const msg = BrainFrameType.decode(new Uint8Array(e.data as ArrayBuffer));
      const f = BrainFrameType.toObject(msg, {
        longs: Number,
        enums: String,
        oneofs: true,
        defaults: true,
      }) as BrainFrame;
      const waiter = this.waiters.shift();
      if (waiter) waiter(f);
      else this.frames.push(f);
    });
    this.closed = new Promise((resolve) => ws.addEventListener("close", () => resolve()));
  }

  /** Dials `{url}?session_id={sessionId}` like the media worker does. */
  static async dial(url: string, sessionId: string): Promise<TestWorker> {
    const ws = new WebSocket(`${url}?session_id=${encodeURIComponent(sessionId)}`);
    await new Promise((resolve, reject) => {
      ws.addEventListener("open", resolve, { once: true });
      ws.addEventListener("error", () => reject(new Error("brain socket failed")), { once: true });
    });
    return new TestWorker(ws);
  }

  /** Sends one ServiceFrame with the next seq, e.g. `send("user_turn", { turn_id, text })`. */
  send(kind: string, body: Record<string, unknown>): void {
    const frame = ServiceFrameType.fromObject({
      seq: ++this.seq,
      timestamp_ms: Date.now(),
      [kind]: body,
    });
    this.ws.send(ServiceFrameType.encode(frame).finish());
  }

  /** Sends SessionStart with a config given as proto3 JSON (enum names). */
  start(sessionId: string, init: unknown = {}, config: Record<string, unknown> = {}): void {
    this.send("session_start", {
      session_id: sessionId,
      agent_id: "agt_test",
      init_json: JSON.stringify(init),
      config,
    });
  }

  /** The next BrainFrame; rejects if none arrives within a few seconds (a failure, not a hang). */
  next(): Promise<BrainFrame> {
    const queued = this.frames.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== take);
        reject(new Error(`no BrainFrame within ${GIVE_UP_MS} ms`));
      }, GIVE_UP_MS);
      const take = (f: BrainFrame) => {
        clearTimeout(timer);
        resolve(f);
      };
      this.waiters.push(take);
    });
  }

  /** The next `n` frames. */
  async take(n: number): Promise<BrainFrame[]> {
    const out: BrainFrame[] = [];
    for (let i = 0; i < n; i++) out.push(await this.next());
    return out;
  }

  /** Closes from the worker's side and waits for the close. */
  async close(): Promise<void> {
    this.ws.close();
    await this.closed;
  }
}

/** A promise with its resolver outside, for handlers that wait on the test. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * Serves a brain with `handlers` on a free local port, dials it as the worker of session ses_1
 * and runs `run`; the socket and the server are closed whatever `run` does.
 */
export async function withBrain(
  handlers: BrainHandlers,
  run: (worker: TestWorker, url: string) => Promise<void>,
): Promise<void> {
  const served = createBrain(handlers).serve({ hostname: "127.0.0.1", port: 0, path: "/brain" });
  const worker = await TestWorker.dial(served.url, "ses_1");
  try {
    await run(worker, served.url);
  } finally {
    await worker.close();
    await served.shutdown();
  }
}
