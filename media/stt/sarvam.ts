// Sarvam's streaming speech recognition (Saaras, `saaras:v3-realtime`) over its realtime
// WebSocket: one socket per stream (per call), manual endpointing driven by the worker's own VAD,
// so the provider's VAD never splits or merges our utterances.
//
// Protocol, from docs.sarvam.ai:
//   https://docs.sarvam.ai/api-reference/speech-to-text/transcribe/realtime/ws.md (endpoint, the
//     API-SUBSCRIPTION-KEY header, speech_start / speech_end "endpointing=manual only")
//   https://docs.sarvam.ai/api/api-guides-tutorials/speech-to-text/realtime-streaming/llms.txt
//     (the guide: audio_input shape, transcript.partial / transcript.final, structured errors)
//
//   GET {url}/speech-to-text-realtime/ws?language_code=hi-IN&model=saaras:v3-realtime
//       &endpointing=manual&encoding=linear16&sample_rate=16000     header API-SUBSCRIPTION-KEY
//   ← {"event":"session.begin",...}                     open() resolves on it
//   → {"event":"speech_start"}, {"event":"audio_input","audio":"<base64 s16le>"}...,
//     {"event":"speech_end"}
//   ← {"event":"transcript.partial","text"}..., {"event":"transcript.final","text"} (one or more)
//   ← {"event":"error","code","message","is_fatal"}     → {"event":"end"} on close()
// The guide's page text could only be read in part here; the parameter names `encoding=linear16`
// and `sample_rate` are those used by Pipecat's realtime adapter (pipecat-ai/pipecat,
// src/pipecat/services/sarvam/stt_realtime.py) and other public clients.
//
// Decisions:
// - finish() sends speech_end and resolves on the next transcript.final, joined after any finals
//   the provider already sent for the utterance mid-speech.
// - No final within finalTimeoutMs (5 s) rejects with RecognitionError rather than passing off a
//   partial: media/engines/routing.ts then replays the utterance on the route's next engine. The
//   socket is then dropped (a late final would land on the wrong utterance).
// - An error frame (is_fatal not false) or a dropped connection rejects pending finish() calls and
//   the utterance in progress; the next utterance opens a new socket (one attempt per utterance,
//   no loop). Idle closes by the provider are handled the same way, lazily.
// - Audio goes in 100 ms batches; if the socket holds more than maxBufferedMs (2 s) unsent, new
//   batches are dropped and counted (audio already queued in the socket cannot be taken back).
//   While (re)connecting, audio waits in a queue of the same bound, dropping its oldest.
// - The key is only ever a header: never in a URL, log line or error message.
import { logger } from "../../common/log.ts";
import {
  type RecognitionEngine,
  RecognitionError,
  type RecognitionResult,
  type RecognitionStream,
  UnservedLanguageError,
} from "./engine.ts";
import { handshakeFault, providerSocket } from "../engines/provider_socket.ts";
import type { EngineFault } from "../engines/breaker.ts";

const log = logger("stt.sarvam");
const RATE = 16000;

/**
 * Proto language → Sarvam code. Saaras v3/v4 "support the same 22 Indian languages" plus en-IN
 * (https://docs.sarvam.ai/api/api-guides-tutorials/speech-to-text/how-to/specify-language-codes):
 * every Indic language of our roster is served. Odia: that page says `od-IN`, but clients of the
 * realtime endpoint use `or-IN` there (Pipecat's realtime adapter maps Odia to or-IN and refuses
 * od-IN); the realtime pages we could read do not settle it. One line to change if it is wrong.
 */
export const SARVAM_LANGUAGE_CODES: Readonly<Record<string, string>> = {
  LANGUAGE_EN: "en-IN",
  LANGUAGE_AS: "as-IN",
  LANGUAGE_BN: "bn-IN",
  LANGUAGE_BRX: "brx-IN",
  LANGUAGE_DOI: "doi-IN",
  LANGUAGE_GU: "gu-IN",
  LANGUAGE_HI: "hi-IN",
  LANGUAGE_KN: "kn-IN",
  LANGUAGE_KS: "ks-IN",
  LANGUAGE_KOK: "kok-IN",
  LANGUAGE_MAI: "mai-IN",
  LANGUAGE_ML: "ml-IN",
  LANGUAGE_MNI: "mni-IN",
  LANGUAGE_MR: "mr-IN",
  LANGUAGE_NE: "ne-IN",
  LANGUAGE_OR: "or-IN",
  LANGUAGE_PA: "pa-IN",
  LANGUAGE_SA: "sa-IN",
  LANGUAGE_SAT: "sat-IN",
  LANGUAGE_SD: "sd-IN",
  LANGUAGE_TA: "ta-IN",
  LANGUAGE_TE: "te-IN",
  LANGUAGE_UR: "ur-IN",
};

/** Proto names of the languages served: all of SARVAM_LANGUAGE_CODES. */
export const SARVAM_STT_LANGUAGES: readonly string[] = Object.keys(SARVAM_LANGUAGE_CODES);

export interface SarvamOptions {
  /** The API subscription key (the registry reads SARVAM_API_KEY). */
  apiKey: string;
  /** Base URL; default wss://api.sarvam.ai. */
  url?: string;
  /** Default saaras:v3-realtime. */
  model?: string;
  /** Until session.begin; default 5000 ms. */
  connectTimeoutMs?: number;
  /** From finish() to the final transcript; default 5000 ms. */
  finalTimeoutMs?: number;
  /** Audio per message; default 100 ms. */
  batchMs?: number;
  /** Unsent audio a socket may hold before new audio is dropped; default 2000 ms. */
  maxBufferedMs?: number;
}

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

interface Settings {
  url: string;
  model: string;
  apiKey: string;
  connectTimeoutMs: number;
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

class SarvamStream implements RecognitionStream {
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
    const wait = this.s.finalTimeoutMs + (this.#connecting ? this.s.connectTimeoutMs : 0);
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
  #connect(): Promise<WebSocket> {
    let ws: WebSocket;
    try {
      ws = providerSocket(this.url, { "API-SUBSCRIPTION-KEY": this.s.apiKey });
    } catch (err) {
      this.stats.connectFailures++;
      return Promise.reject(new RecognitionError(`bad Sarvam URL: ${(err as Error).message}`));
    }
    let closed!: () => void;
    const done = new Promise<void>((resolve) => (closed = resolve));
    this.#sockets.add(done);
    done.then(() => this.#sockets.delete(done));
    return new Promise((resolve, reject) => {
      let begun = false;
      let error = "";
      const refuse = (why: string, fault?: EngineFault) => {
        if (begun) return;
        begun = true;
        clearTimeout(timer);
        this.stats.connectFailures++;
        if (ws.readyState < WebSocket.CLOSING) ws.close(1000);
        reject(new RecognitionError(scrub(why, this.s.apiKey), { fault }));
      };
      const timer = setTimeout(
        () =>
          refuse(
            `Sarvam did not begin a session within ${this.s.connectTimeoutMs} ms`,
            "connection",
          ),
        this.s.connectTimeoutMs,
      );
      ws.onerror = (e) => (error = (e as ErrorEvent).message ?? "");
      ws.onclose = (e) => {
        closed();
        if (!begun) {
          const why = error || `code ${e.code}${e.reason ? `: ${e.reason}` : ""}`;
          // Refused at the upgrade (HTTP 403), or just after it with a policy close (1008).
          const fault = error ? handshakeFault(error) : e.code === 1008 ? "auth" : "connection";
          return refuse(`Sarvam refused the connection (${why})`, fault);
        }
        this.#lost(ws, e.code, e.reason);
      };
      ws.onmessage = (e) => {
        const m = parse(e.data);
        if (begun) return this.#receive(ws, m);
        if (m.event === "session.begin") {
          begun = true;
          clearTimeout(timer);
          this.stats.connects++;
          resolve(ws);
        } else if (m.event === "error" && m.is_fatal !== false) {
          refuse(
            `Sarvam refused the session (${String(m.code)}: ${String(m.message)})`,
            /auth|key|forbidden|unauthori[sz]ed|permission/i.test(String(m.code))
              ? "auth"
              : undefined,
          );
        }
      };
    });
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
            message: scrub(String(m.message), this.s.apiKey),
          });
          return;
        }
        this.#drop();
        this.#fail(new RecognitionError(scrub(what, this.s.apiKey)));
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
    this.#fail(new RecognitionError(scrub(`Sarvam connection closed (${why})`, this.s.apiKey)));
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

export class SarvamRecognitionEngine implements RecognitionEngine {
  /** The registry name (media/engines/speech_config.ts). */
  readonly name = "sarvam-saaras";
  readonly kind = "provider";
  readonly languages = SARVAM_STT_LANGUAGES;
  #s: Settings;
  #stats: SarvamStats = {
    streams: 0,
    connects: 0,
    reconnects: 0,
    connectFailures: 0,
    droppedAudioMs: 0,
    finalTimeouts: 0,
    providerErrors: 0,
  };
  #streams = new Set<SarvamStream>();
  #closed = false;

  constructor(options: SarvamOptions) {
    if (!options.apiKey) throw new TypeError("SarvamRecognitionEngine needs an apiKey");
    const batchMs = options.batchMs ?? 100;
    this.#s = {
      url: (options.url ?? "wss://api.sarvam.ai").replace(/\/+$/, ""),
      model: options.model ?? "saaras:v3-realtime",
      apiKey: options.apiKey,
      connectTimeoutMs: options.connectTimeoutMs ?? 5000,
      finalTimeoutMs: options.finalTimeoutMs ?? 5000,
      batchSamples: Math.max(1, Math.round((RATE * batchMs) / 1000)),
      // base64 in JSON: 4/3 of the 32 bytes a ms of 16 kHz s16 takes.
      maxBufferedBytes: ((options.maxBufferedMs ?? 2000) * 32 * 4) / 3,
    };
  }

  async open(language: string): Promise<RecognitionStream> {
    const code = SARVAM_LANGUAGE_CODES[language];
    if (!code) throw new UnservedLanguageError(language, this.name, this.languages);
    if (this.#closed) throw new RecognitionError("recognition engine closed");
    const stream = new SarvamStream(
      this.#s,
      this.#stats,
      sessionUrl(this.#s, code),
      (s) => this.#streams.delete(s),
    );
    this.#streams.add(stream);
    try {
      await stream.start();
    } catch (err) {
      stream.close();
      throw err;
    }
    if (this.#closed) {
      stream.close();
      throw new RecognitionError("recognition engine closed");
    }
    return stream;
  }

  stats(): SarvamStats {
    return { ...this.#stats, streams: this.#streams.size };
  }

  /**
   * The breaker's probe: a session begun (the key is checked at the upgrade, or by a close right
   * after it) and ended at once, no audio sent. Its connects are not the calls' stats.
   */
  async probe(): Promise<void> {
    if (this.#closed) throw new RecognitionError("recognition engine closed");
    const stream = new SarvamStream(
      this.#s,
      { ...this.#stats },
      sessionUrl(this.#s, SARVAM_LANGUAGE_CODES.LANGUAGE_EN),
      () => {},
    );
    try {
      await stream.start();
    } finally {
      stream.close();
      await stream.closed();
    }
  }

  /** Closes every stream and waits (up to a second) for their sockets to close. */
  async close(): Promise<void> {
    this.#closed = true;
    const streams = [...this.#streams];
    for (const s of streams) s.close();
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      Promise.all(streams.map((s) => s.closed())),
      new Promise((resolve) => (timer = setTimeout(resolve, 1000))),
    ]);
    clearTimeout(timer);
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/** The session URL: the language and audio format ride in the query, the key does not. */
export function sessionUrl(s: { url: string; model: string }, languageCode: string): string {
  const query = new URLSearchParams({
    language_code: languageCode,
    model: s.model,
    endpointing: "manual",
    encoding: "linear16",
    sample_rate: String(RATE),
  });
  return `${s.url}/speech-to-text-realtime/ws?${query}`;
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

/** Provider text may echo what it was sent; the key never leaves in a message. */
function scrub(text: string, key: string): string {
  return key ? text.split(key).join("***") : text;
}
