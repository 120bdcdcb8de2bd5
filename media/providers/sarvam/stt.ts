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
// - The key is only ever a header: never in a URL, log line or error message (the provider base,
//   ../base/provider.ts, makes every error and redacts it).
// This file is the engine (options, streams opened, the probe); one stream is stt_stream.ts.
import {
  type RecognitionEngine,
  RecognitionError,
  type RecognitionStream,
  UnservedLanguageError,
} from "../../stt/engine.ts";
import { baseUrl, ProviderBase } from "../base/provider.ts";
import { SAARAS_LANGUAGE_CODES, SARVAM_STT_LANGUAGES } from "./languages.ts";
import { RATE, type SarvamStats, SarvamStream, type Settings } from "./stt_stream.ts";

export { SARVAM_STT_LANGUAGES };
export type { SarvamStats };

export interface SarvamOptions {
  /** The API subscription key (its registry entry, engines.ts, reads SARVAM_API_KEY). */
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

export class SarvamRecognitionEngine implements RecognitionEngine {
  /** The registry name (engines.ts). */
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
      base: new ProviderBase("Sarvam", RecognitionError, {
        url: baseUrl(options.url, "wss://api.sarvam.ai"),
        apiKey: options.apiKey,
        connectTimeoutMs: options.connectTimeoutMs ?? 5000,
      }),
      model: options.model ?? "saaras:v3-realtime",
      finalTimeoutMs: options.finalTimeoutMs ?? 5000,
      batchSamples: Math.max(1, Math.round((RATE * batchMs) / 1000)),
      // base64 in JSON: 4/3 of the 32 bytes a ms of 16 kHz s16 takes.
      maxBufferedBytes: ((options.maxBufferedMs ?? 2000) * 32 * 4) / 3,
    };
  }

  async open(language: string): Promise<RecognitionStream> {
    const code = SAARAS_LANGUAGE_CODES[language];
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
      sessionUrl(this.#s, SAARAS_LANGUAGE_CODES.LANGUAGE_EN),
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
export function sessionUrl(s: Settings, languageCode: string): string {
  const query = new URLSearchParams({
    language_code: languageCode,
    model: s.model,
    endpointing: "manual",
    encoding: "linear16",
    sample_rate: String(RATE),
  });
  return `${s.base.connection.url}/speech-to-text-realtime/ws?${query}`;
}
