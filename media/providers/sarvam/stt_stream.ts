// One Saaras recognition stream (one call's): its socket, sessions begun per utterance after a
// loss, audio batched and bounded, finals matched to the utterance that asked for them. The
// engine (stt.ts) opens these; the protocol and the decisions are described there.
import { logger } from "../../../common/log.ts";
import {
  RecognitionError,
  type RecognitionResult,
  type RecognitionStream,
} from "../../stt/engine.ts";
import type { ProviderBase } from "../base/provider.ts";

const log = logger("stt.sarvam");
/** Saaras takes 16 kHz s16le. */
export const RATE = 16000;

export interface SarvamStats {
  /** Open streams. */
  streams: number;
  /** Sessions begun, first connections and reconnections. */
  connects: number;
  reconnects: number;
  connectFailures: number;
  /** Audio dropped because the socket (or the reconnect queue) was full. */
  droppedAudioMs: number;
  finalTimeouts: number;
  /** Error frames received, fatal or not. */
  providerErrors: number;
}

/** A Saaras engine's settings, shared by its streams. */
export interface Settings {
  /** The connection (URL, key, connect timeout), its errors and their redaction. */
  base: ProviderBase<RecognitionError>;
  model: string;
  finalTimeoutMs: number;
  batchSamples: number;
  maxBufferedBytes: number;
}

interface Pending {
  resolve: (r: RecognitionResult) => void;
  reject: (e: Error) => void;
  audioMs: number;
  finals: string[];
  timer: ReturnType<typeof setTimeout>;
}

interface Queued {
  msg: string;
  audioMs: number;
}

/** A server event: only the fields this client reads. */
interface ServerEvent {
  event?: string;
  text?: unknown;
  code?: unknown;
  message?: unknown;
  is_fatal?: unknown;
}

export class SarvamStream implements RecognitionStream {
  #ws: WebSocket | null = null;
  #connecting = false;
  #queue: Queued[] = [];
  #listeners: ((text: string) => void)[] = [];
  #pending: Pending[] = [];
  // The utterance in progress.
  #samples = 0;
  #finals: string[] = [];
  #partial = "";
  #shown = "";
  #broken: RecognitionError | null = null;
  #batch: Int16Array;
  #fill = 0;
  #closed = false;
  #sockets = new Set<Promise<void>>();

  constructor(
    private s: Settings,
    private stats: SarvamStats,
    private url: string,
    private onClose: (stream: SarvamStream) => void,
  ) {
    this.#batch = new Int16Array(s.batchSamples);
  }

  /** The first session; rejects with RecognitionError. */
  async start(): Promise<void> {
    const ws = await this.#connect();
    if (this.#closed) {
      ws.close(1000);
      throw new RecognitionError("recognition stream closed");
    }
    this.#ws = ws;
  }

  push(pcm16k: Int16Array): void {
    if (this.#closed) return;
    if (this.#samples === 0) this.#begin();
    this.#samples += pcm16k.length;
    if (this.#broken) return; // this utterance is lost already; finish() says so
    let from = 0;
    while (from < pcm16k.length) {
      const n = Math.min(pcm16k.length - from, this.#batch.length - this.#fill);
      this.#batch.set(pcm16k.subarray(from, from + n), this.#fill);
      this.#fill += n;
      from += n;
      if (this.#fill === this.#batch.length) this.#flush();
    }
  }

  onInterim(cb: (text: string) => void): void {
    this.#listeners.push(cb);
  }

  finish(): Promise<RecognitionResult> {
    if (this.#closed) return Promise.reject(new RecognitionError("recognition stream is closed"));
    if (this.#samples === 0) return Promise.resolve({ text: "", audioMs: 0 });
    const audioMs = (this.#samples * 1000) / RATE;
    this.#flush();
    const broken = this.#broken;
    const finals = this.#finals;
    this.#samples = 0;
    this.#finals = [];
    this.#partial = "";
    this.#shown = "";
    this.#broken = null;
    this.#fill = 0;
    if (broken) return Promise.reject(broken);
    this.#send(JSON.stringify({ event: "speech_end" }));
    // A reconnection in flight gets its own timeout on top.
    const wait = this.s.finalTimeoutMs +
      (this.#connecting ? this.s.base.connection.connectTimeoutMs : 0);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => this.#timedOut(p), wait);
      const p: Pending = { resolve, reject, audioMs, finals, timer };
      this.#pending.push(p);
    });
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#queue = [];
    this.#drop({ event: "end" });
    this.#fail(new RecognitionError("recognition stream closed"));
    this.onClose(this);
  }

  /** Resolves once every socket this stream opened has closed. */
  async closed(): Promise<void> {
    await Promise.all([...this.#sockets]);
  }

  /** A new utterance: speech_start, on a new socket if the last one is gone. */
  #begin(): void {
    this.#send(JSON.stringify({ event: "speech_start" }));
    if (!this.#ws && !this.#connecting) this.#reconnect();
  }

  #flush(): void {
    if (this.#fill === 0 || this.#broken) {
      this.#fill = 0;
      return;
    }
    const audio = toBase64(pcmBytes(this.#batch.subarray(0, this.#fill)));
    this.#send(JSON.stringify({ event: "audio_input", audio }), (this.#fill * 1000) / RATE);
    this.#fill = 0;
  }

  #send(msg: string, audioMs = 0): void {
    const ws = this.#ws;
    if (ws && ws.readyState === WebSocket.OPEN) {
      if (audioMs && ws.bufferedAmount > this.s.maxBufferedBytes) {
        this.stats.droppedAudioMs += audioMs;
        return;
      }
      ws.send(msg);
      return;
    }
    this.#queue.push({ msg, audioMs });
    let queuedMs = this.#queue.reduce((n, q) => n + q.audioMs, 0);
    while (queuedMs * 32 * 4 / 3 > this.s.maxBufferedBytes) {
      const i = this.#queue.findIndex((q) => q.audioMs > 0);
      queuedMs -= this.#queue[i].audioMs;
      this.stats.droppedAudioMs += this.#queue[i].audioMs;
      this.#queue.splice(i, 1);
    }
  }

  #reconnect(): void {
    this.#connecting = true;
    this.stats.reconnects++;
    this.#connect().then((ws) => {
      this.#connecting = false;
      if (this.#closed) return ws.close(1000);
      this.#ws = ws;
      const queued = this.#queue;
      this.#queue = [];
      for (const q of queued) this.#send(q.msg, q.audioMs);
    }, (err: RecognitionError) => {
      this.#connecting = false;
      this.#queue = [];
      this.#fail(new RecognitionError(`could not reconnect: ${err.message}`, { fault: err.fault }));
    });
  }

  /** A socket with a session begun, its handlers bound to this stream. */
  async #connect(): Promise<WebSocket> {
    let ws: WebSocket;
    try {
      ws = await this.s.base.openSocket(
        this.url,
        { "API-SUBSCRIPTION-KEY": this.s.base.connection.apiKey! },
        {
          onMessage: (data) => {
            const m = parse(data);
            if (m.event === "session.begin") return true;
            if (m.event !== "error" || m.is_fatal === false) return undefined;
            return {
              refused: `Sarvam refused the session (${String(m.code)}: ${String(m.message)})`,
              fault: /auth|key|forbidden|unauthori[sz]ed|permission/i.test(String(m.code))
                ? "auth"
                : undefined,
            };
          },
          // Refused at the upgrade (HTTP 403), or just after it with a policy close (1008).
          closeFault: (code) => code === 1008 ? "auth" : "connection",
          timeoutMessage:
            `Sarvam did not begin a session within ${this.s.base.connection.connectTimeoutMs} ms`,
          created: (socket) => this.#follow(socket),
        },
      );
    } catch (err) {
      this.stats.connectFailures++;
      throw err;
    }
    this.stats.connects++;
    ws.onmessage = (e) => this.#receive(ws, parse(e.data));
    ws.onclose = (e) => this.#lost(ws, e.code, e.reason);
    return ws;
  }

  /** Keeps `ws` among the sockets closed() waits for, until it has closed. */
  #follow(ws: WebSocket): void {
    const done = new Promise<void>((resolve) =>
      ws.addEventListener("close", () => resolve(), { once: true })
    );
    this.#sockets.add(done);
    done.then(() => this.#sockets.delete(done));
  }

  #receive(ws: WebSocket, m: ServerEvent): void {
    if (ws !== this.#ws) return;
    const text = typeof m.text === "string" ? m.text.trim() : "";
    switch (m.event) {
      case "transcript.partial":
        // Partials after finish() may be that utterance's: they are not shown.
        if (this.#pending.length || this.#samples === 0 || this.#broken) return;
        this.#partial = text;
        this.#interim();
        break;
      case "transcript.final": {
        const p = this.#pending.shift();
        if (p) {
          clearTimeout(p.timer);
          p.resolve({ text: join([...p.finals, text]), audioMs: p.audioMs });
        } else if (this.#samples > 0 && !this.#broken) {
          // The provider closed a segment mid-utterance; more follow.
          this.#finals.push(text);
          this.#partial = "";
          this.#interim();
        }
        break;
      }
      case "error": {
        this.stats.providerErrors++;
        const what = `Sarvam error ${String(m.code)}: ${String(m.message)}`;
        if (m.is_fatal === false) {
          log.warn("provider error", {
            code: String(m.code),
            message: this.s.base.redact(String(m.message)),
          });
          return;
        }
        this.#drop();
        this.#fail(this.s.base.error(what));
        break;
      }
    }
  }

  #interim(): void {
    const text = join([...this.#finals, this.#partial]);
    if (text === this.#shown) return;
    this.#shown = text;
    for (const cb of this.#listeners) cb(text);
  }

  /** The connection went away under us. */
  #lost(ws: WebSocket, code: number, reason: string): void {
    if (ws !== this.#ws) return;
    this.#ws = null;
    // Deno reports 0 for a connection lost without a close frame (1006 in the spec).
    const why = code && code !== 1006 ? `code ${code}${reason ? `: ${reason}` : ""}` : "abruptly";
    this.#fail(this.s.base.error(`Sarvam connection closed (${why})`));
  }

  #timedOut(p: Pending): void {
    this.stats.finalTimeouts++;
    this.#pending = this.#pending.filter((q) => q !== p);
    p.reject(
      new RecognitionError(`no final transcript from Sarvam within ${this.s.finalTimeoutMs} ms`),
    );
    // Its final may still come and would be taken for the next utterance's: start afresh.
    this.#drop();
    this.#fail(new RecognitionError("Sarvam connection reset after a final timed out"));
  }

  /** Closes the current socket on purpose (its close event is then ignored). */
  #drop(last?: object): void {
    const ws = this.#ws;
    this.#ws = null;
    if (!ws) return;
    if (last && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(last));
    if (ws.readyState < WebSocket.CLOSING) ws.close(1000);
  }

  /** Rejects every pending finish() and loses the utterance in progress. */
  #fail(err: RecognitionError): void {
    this.#queue = []; // what waited for a socket belongs to the lost utterance
    for (const p of this.#pending) {
      clearTimeout(p.timer);
      p.reject(err);
    }
    this.#pending = [];
    if (this.#samples > 0) this.#broken = err;
    this.#fill = 0;
  }
}

function parse(data: unknown): ServerEvent {
  if (typeof data !== "string") return {};
  try {
    const m = JSON.parse(data);
    return m && typeof m === "object" ? m : {};
  } catch {
    return {};
  }
}

function join(parts: string[]): string {
  return parts.filter(Boolean).join(" ");
}

/** Little-endian whatever the host. */
function pcmBytes(pcm: Int16Array): Uint8Array {
  const out = new Uint8Array(pcm.length * 2);
  const view = new DataView(out.buffer);
  for (let i = 0; i < pcm.length; i++) view.setInt16(i * 2, pcm[i], true);
  return out;
}

function toBase64(bytes: Uint8Array): string {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(s);
}
