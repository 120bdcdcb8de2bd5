// The chat messages a simulated caller receives, kept with their arrival times, and waits over
// them: the first message from an index on that matches, unless an error, a hang-up or an abort
// comes first or the deadline passes. The simulator's steps (caller/simulator.ts) are such waits.
import type { RtviMessage, TestCaller } from "./caller.ts";

/** What ended a wait other than the awaited message. */
export type Stop =
  | { kind: "timeout" }
  | { kind: "error"; msg: RtviMessage }
  | { kind: "hangup" }
  | { kind: "aborted" };
export type Hit = { kind: "match"; index: number; at: number; msg: RtviMessage };

const CLOSED = "__closed", ABORTED = "__aborted";

/** Received chat messages with their arrival times, and waits over them from an index. */
export class Watch {
  readonly seen: { at: number; msg: RtviMessage }[] = [];
  /** Resolves at the first error, hang-up or abort. */
  readonly terminal: Promise<void>;
  #wake = new Set<() => void>();
  #endTerminal!: () => void;

  constructor(
    caller: TestCaller,
    signal: AbortSignal | undefined,
    onMessage: (m: RtviMessage) => void,
  ) {
    this.terminal = new Promise((r) => this.#endTerminal = r);
    for (const m of caller.messages) this.#push(m);
    caller.onMessage.on((m) => {
      this.#push(m);
      onMessage(m);
    });
    caller.chat.stateChanged.subscribe((s) => {
      if (s === "closed") this.#push({ type: CLOSED });
    });
    if (signal?.aborted) this.#push({ type: ABORTED });
    signal?.addEventListener("abort", () => this.#push({ type: ABORTED }), { once: true });
  }

  #push(msg: RtviMessage): void {
    this.seen.push({ at: performance.now(), msg });
    if (stopOf(msg)) this.#endTerminal();
    for (const w of [...this.#wake]) w();
  }

  /** The first message at `from` or later that matches, unless a stop comes first. */
  async next(
    from: number,
    match: (m: RtviMessage) => boolean,
    deadline: number,
  ): Promise<Hit | Stop> {
    for (let i = from;; i++) {
      while (i >= this.seen.length) {
        const left = deadline - performance.now();
        if (left <= 0 || !(await this.#arrival(left))) return { kind: "timeout" };
      }
      const { at, msg } = this.seen[i];
      const stop = stopOf(msg);
      if (stop) return stop;
      if (match(msg)) return { kind: "match", index: i, at, msg };
    }
  }

  #arrival(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.#wake.delete(wake);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.#wake.delete(wake);
        resolve(false);
      }, ms);
      this.#wake.add(wake);
    });
  }
}

function stopOf(msg: RtviMessage): Stop | null {
  if (msg.type === ABORTED) return { kind: "aborted" };
  if (msg.type === CLOSED) return { kind: "hangup" };
  if (msg.type === "signalling" && (msg.message as { type?: string })?.type === "peerLeft") {
    return { kind: "hangup" };
  }
  if (msg.label === "rtvi-ai" && (msg.type === "error" || msg.type === "error-response")) {
    return { kind: "error", msg };
  }
  return null;
}

export const isRtvi = (type: string) => (m: RtviMessage) =>
  m.label === "rtvi-ai" && m.type === type;
export const isFinal = (m: RtviMessage) =>
  isRtvi("user-transcription")(m) && (m.data as { final?: boolean })?.final === true;
const BOT_EVENTS = new Set(["bot-output", "bot-started-speaking", "bot-stopped-speaking"]);
export const isBotEvent = (m: RtviMessage) => m.label === "rtvi-ai" && BOT_EVENTS.has(m.type);
