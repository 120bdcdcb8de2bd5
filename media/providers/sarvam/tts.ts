// Sarvam's Bulbul text-to-speech over its streaming WebSocket: one socket per unit, the audio
// streamed back as it is made (of Sarvam's REST, HTTP-stream and WebSocket APIs, the docs give
// the WebSocket the lowest time to first audio).
//
// Protocol, from docs.sarvam.ai:
//   https://docs.sarvam.ai/api-reference-docs/text-to-speech/stream (the AsyncAPI reference:
//     wss://api.sarvam.ai/text-to-speech/ws, header Api-Subscription-Key, query `model` and
//     `send_completion_event`; send config / text / flush / ping; receive audio / event / error)
//   https://docs.sarvam.ai/api-reference-docs/api-guides-tutorials/text-to-speech/streaming-api/web-socket
//     (the guide: config first, flush ends the text, at most 2500 characters per text message)
//   https://docs.sarvam.ai/api-reference-docs/getting-started/models/bulbul (Bulbul v3: the 11
//     languages, the speakers, 8/16/22.05/24 kHz when streaming, 24 kHz by default)
//   https://docs.sarvam.ai/api-reference-docs/api-guides-tutorials/text-to-speech/how-to/set-the-language
//     (language codes; Odia is od-IN)
//   https://docs.sarvam.ai/api/errors-troubleshooting (403 invalid_api_key_error, 429, 5xx)
//
//   GET {url}/text-to-speech/ws?model=bulbul:v3&send_completion_event=true
//       header api-subscription-key: <key>
//   → {"type":"config","data":{"target_language_code":"hi-IN","speaker":"ritu","model":"bulbul:v3",
//                              "speech_sample_rate":"24000","output_audio_codec":"linear16"}}
//   → {"type":"text","data":{"text":"..."}}             one or more (a long unit is cut at sentences)
//   → {"type":"flush"}
//   ← {"type":"audio","data":{"audio":"<base64 PCM16LE mono>","content_type":"audio/pcm",...}}...
//   ← {"type":"event","data":{"event_type":"final"}}    the unit's audio is all there
//   ← {"type":"error","data":{"message":"...","code":"..."}}
// The reference pages could only be read in part here; the frames' field names (data.audio,
// data.event_type, data.message / data.code) and speech_sample_rate as a string are as Pipecat's
// and LiveKit's Sarvam adapters use them (pipecat-ai/pipecat src/pipecat/services/sarvam/tts.py,
// livekit/agents livekit-plugins-sarvam tts.py).
//
// Decisions:
// - One socket per unit, closed when the unit ends. The protocol has no cancel message (config,
//   text, flush, ping only), so closing the socket is how an abort or an early exit stops the
//   work; a socket kept warm between units would save the handshake but would have to be
//   dropped on every barge-in anyway.
// - linear16 at 24 kHz: raw PCM (no MP3 decoder), resampled to 48 kHz as each frame arrives.
// - Bulbul gives no word timings: the chunk of the `final` event carries estimateWordTimings over
//   the whole unit (its duration is only known then); earlier chunks carry no words.
// - Timeouts: the socket must open within connectTimeoutMs (5 s); then a silence of
//   readTimeoutMs (10 s) between frames, the first audio included, fails the unit.
// - The key is only ever a header: never in a URL or an error message.
import {
  catalogNames,
  servedVoice,
  type SynthesisCatalog,
  type SynthesisChunk,
  type SynthesisEngine,
  SynthesisError,
  type SynthesisOptions,
} from "../../tts/engine.ts";
import { estimateWordTimings } from "../../tts/estimated_timing.ts";
import {
  AudioFormatError,
  decodeBase64,
  PcmDecoder,
  type SpeakerOverrides,
  textParts,
  withSpeakers,
} from "../../tts/provider_audio.ts";
import { baseUrl, ProviderBase } from "../base/provider.ts";
import { BULBUL_LANGUAGES } from "./languages.ts";

/**
 * Persona → speaker, per model. Bulbul's speakers are multilingual (any speaker, any of the 11
 * languages), so one pair serves every language. v3 (docs: the Bulbul model page lists the
 * speakers, without genders): ritu is among the female voices and shubh (the default) among the
 * male ones in LiveKit's per-model gender lists; v2: Anushka (female) and Abhilash (male), as
 * the REST reference lists them.
 */
export const BULBUL_SPEAKERS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  "bulbul:v3": { VOICE_ANANYA: "ritu", VOICE_ARJUN: "shubh" },
  "bulbul:v2": { VOICE_ANANYA: "anushka", VOICE_ARJUN: "abhilash" },
};

export const DEFAULT_BULBUL_MODEL = "bulbul:v3";

/** Every Bulbul language in both personas, with `model`'s speakers. */
export function bulbulCatalog(model = DEFAULT_BULBUL_MODEL): SynthesisCatalog {
  const speakers = BULBUL_SPEAKERS[model] ?? BULBUL_SPEAKERS[DEFAULT_BULBUL_MODEL];
  return Object.fromEntries(Object.keys(BULBUL_LANGUAGES).map((l) => [l, { ...speakers }]));
}

/** What the registry advertises for Sarvam synthesis (the default model's speakers). */
export const SARVAM_TTS_CATALOG: SynthesisCatalog = bulbulCatalog();

/** The sample rates the streaming API makes. */
const STREAMING_RATES = [8000, 16000, 22050, 24000];
/** Characters per text message (the WebSocket guide). */
const MAX_TEXT_CHARS = 2500;

export interface SarvamSynthesisOptions {
  /** The API subscription key (the registry reads SARVAM_API_KEY). */
  apiKey: string;
  /** Base URL (ws, wss, http or https); default wss://api.sarvam.ai. */
  url?: string;
  /** Default bulbul:v3. */
  model?: string;
  /** 8000, 16000, 22050 or 24000; default 24000. */
  sampleRate?: number;
  /** Speech pace, sent only when set (v3: 0.5-2.0). */
  pace?: number;
  /** Until the socket opens; default 5000 ms. */
  connectTimeoutMs?: number;
  /** Longest silence from Sarvam once the text is sent; default 10000 ms. */
  readTimeoutMs?: number;
  /** Language → persona → speaker, over the model's defaults. */
  speakers?: SpeakerOverrides;
}

/** What a unit's socket delivered, in order: audio, then the end (final, or an error). */
type Inbound =
  | { kind: "audio"; bytes: Uint8Array }
  | { kind: "final" }
  | { kind: "error"; error: SynthesisError };

/** A frame from the server: only the fields read here. */
interface ServerFrame {
  type?: unknown;
  data?: { audio?: unknown; event_type?: unknown; message?: unknown; code?: unknown };
}

/**
 * A unit's inbound items for the generator to take in order. put() keeps the order (audio before
 * a later error frame is still played); fail() ends at once (an abort, a timeout, engine close).
 */
class Mailbox {
  #items: Inbound[] = [];
  #error: { reason: unknown } | null = null;
  #ended = false;
  #wake: (() => void) | null = null;

  put(item: Inbound) {
    if (this.#error || this.#ended) return;
    this.#ended = item.kind !== "audio";
    this.#items.push(item);
    this.#poke();
  }

  /** Whether the end (final or an error) is in, or the unit failed. */
  get ended(): boolean {
    return this.#ended || this.#error !== null;
  }

  /** Ends the unit with `reason`: what is queued is dropped, the next take() throws. */
  fail(reason: unknown) {
    if (this.#error) return;
    this.#error = { reason };
    this.#items.length = 0;
    this.#poke();
  }

  async take(): Promise<Inbound> {
    while (true) {
      if (this.#error) throw this.#error.reason;
      const item = this.#items.shift();
      if (item) return item;
      await new Promise<void>((resolve) => this.#wake = resolve);
    }
  }

  #poke() {
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }
}

function failure(message: string): Inbound {
  return { kind: "error", error: new SynthesisError(message) };
}

export class SarvamSynthesisEngine implements SynthesisEngine {
  readonly name = "sarvam-bulbul";
  readonly kind = "provider";
  readonly catalog: SynthesisCatalog;
  readonly voices: readonly string[];
  readonly languages: readonly string[];
  readonly streaming = true;
  readonly sampleRate: number;
  readonly wordTimings = "estimated";
  readonly model: string;
  #base: ProviderBase<SynthesisError>;
  #url: string;
  #pace: number | undefined;
  #readMs: number;
  #units = new Set<(reason: unknown) => void>();
  #closed = false;

  constructor(options: SarvamSynthesisOptions) {
    if (!options.apiKey) throw new RangeError("Sarvam needs an API key");
    this.model = options.model ?? DEFAULT_BULBUL_MODEL;
    this.sampleRate = options.sampleRate ?? 24000;
    if (!STREAMING_RATES.includes(this.sampleRate)) {
      throw new RangeError(`Sarvam streams at ${STREAMING_RATES.join(", ")} Hz only`);
    }
    const base = new URL(options.url ?? "wss://api.sarvam.ai");
    if (base.protocol === "http:") base.protocol = "ws:";
    if (base.protocol === "https:") base.protocol = "wss:";
    this.#base = new ProviderBase("Sarvam", SynthesisError, {
      url: baseUrl(base.href, "wss://api.sarvam.ai"),
      apiKey: options.apiKey,
      connectTimeoutMs: options.connectTimeoutMs ?? 5000,
    });
    const query = new URLSearchParams({ model: this.model, send_completion_event: "true" });
    this.#url = `${this.#base.connection.url}/text-to-speech/ws?${query}`;
    this.#pace = options.pace;
    this.#readMs = options.readTimeoutMs ?? 10_000;
    this.catalog = withSpeakers(
      bulbulCatalog(this.model),
      options.speakers,
      (l) => Object.hasOwn(BULBUL_LANGUAGES, l),
    );
    ({ voices: this.voices, languages: this.languages } = catalogNames(this.catalog));
  }

  synthesize(text: string, options: SynthesisOptions): AsyncIterable<SynthesisChunk> {
    const { voice, language, signal } = options;
    const speaker = servedVoice(this, language, voice);
    if (this.#closed) throw new SynthesisError("engine closed");
    return this.#unit(text, speaker, BULBUL_LANGUAGES[language], signal);
  }

  /** Closes every open unit's socket; their streams fail with SynthesisError. */
  close(): Promise<void> {
    this.#closed = true;
    const err = new SynthesisError("engine closed");
    for (const fail of [...this.#units]) fail(err);
    return Promise.resolve();
  }

  async *#unit(
    text: string,
    speaker: string,
    code: string,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<SynthesisChunk> {
    if (signal?.aborted) throw signal.reason;
    const parts = textParts(text, MAX_TEXT_CHARS)
      .map((p) => text.slice(p.start, p.end))
      .filter((t) => /\S/.test(t));
    if (!parts.length) return; // nothing to say: no socket
    const box = new Mailbox();
    // Until the socket is accepted, an abort or the engine's close stops the wait for it.
    const connecting = new AbortController();
    const fail = (reason: unknown) => {
      box.fail(reason);
      connecting.abort(reason);
    };
    const onAbort = () => fail(signal!.reason);
    this.#units.add(fail);
    signal?.addEventListener("abort", onAbort, { once: true });
    let ws: WebSocket | undefined;
    let readTimer: ReturnType<typeof setTimeout> | undefined;
    const armRead = () => {
      clearTimeout(readTimer);
      readTimer = setTimeout(
        () => box.fail(new SynthesisError(`Sarvam sent nothing for ${this.#readMs} ms`)),
        this.#readMs,
      );
    };
    const pcm = new PcmDecoder({ rate: this.sampleRate, wav: "auto" });
    try {
      ws = await this.#base.openSocket(this.#url, this.#headers(), {
        signal: connecting.signal,
        created: (socket) => (socket.binaryType = "arraybuffer"),
      });
      const config: Record<string, unknown> = {
        target_language_code: code,
        speaker,
        model: this.model,
        speech_sample_rate: String(this.sampleRate),
        output_audio_codec: "linear16",
      };
      if (this.#pace !== undefined) config.pace = this.#pace;
      ws.send(JSON.stringify({ type: "config", data: config }));
      for (const part of parts) ws.send(JSON.stringify({ type: "text", data: { text: part } }));
      ws.send(JSON.stringify({ type: "flush" }));
      armRead();
      ws.onmessage = (ev: MessageEvent) => {
        const item = this.#parse(ev.data);
        if (item) box.put(item);
        if (box.ended) clearTimeout(readTimer);
        else armRead();
      };
      ws.onclose = (ev: CloseEvent) => {
        clearTimeout(readTimer);
        const error = this.#base.error(
          `Sarvam closed the connection before the unit ended (code ${ev.code})`,
        );
        box.put({ kind: "error", error });
      };
      while (true) {
        const item = await box.take();
        if (item.kind === "audio") {
          const out = pcm.push(item.bytes);
          if (out.length) yield { pcm: out, words: [] };
          if (signal?.aborted) throw signal.reason;
        } else if (item.kind === "error") throw item.error;
        else {
          const tail = pcm.end();
          yield { pcm: tail, words: estimateWordTimings(text, pcm.durationMs) };
          return;
        }
      }
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      if (err instanceof AudioFormatError) {
        throw new SynthesisError(`Sarvam sent malformed audio: ${err.message}`);
      }
      throw err;
    } finally {
      box.fail(new SynthesisError("unit over")); // late frames and events are ignored
      clearTimeout(readTimer);
      signal?.removeEventListener("abort", onAbort);
      this.#units.delete(fail);
      pcm.close();
      if (ws) {
        // Frames still in flight must not re-arm a timer.
        ws.onmessage = ws.onclose = null;
        if (ws.readyState === WebSocket.OPEN) ws.close(1000);
      }
    }
  }

  /** The key, as Sarvam's streaming socket takes it. */
  #headers(): Record<string, string> {
    return { "api-subscription-key": this.#base.connection.apiKey! };
  }

  /** A frame as an item (a malformed one as an error), or null to skip it. */
  #parse(data: unknown): Inbound | null {
    let frame: ServerFrame;
    try {
      if (typeof data !== "string") throw new Error("binary frame");
      frame = JSON.parse(data);
    } catch {
      return failure("Sarvam sent a malformed frame");
    }
    if (frame.type === "audio") {
      if (typeof frame.data?.audio !== "string") {
        return failure("Sarvam sent an audio frame without audio");
      }
      try {
        return { kind: "audio", bytes: decodeBase64(frame.data.audio) };
      } catch (err) {
        return failure(`Sarvam sent malformed audio: ${(err as Error).message}`);
      }
    }
    if (frame.type === "event") {
      return frame.data?.event_type === "final" ? { kind: "final" } : null;
    }
    if (frame.type === "error") {
      const code = typeof frame.data?.code === "string" || typeof frame.data?.code === "number"
        ? ` ${frame.data.code}`
        : "";
      const message = typeof frame.data?.message === "string" ? frame.data.message : "no message";
      return failure(`Sarvam error${code}: ${this.#base.redact(message)}`);
    }
    return null;
  }

  /**
   * The breaker's probe: the streaming socket opened (the key is checked at the upgrade) and
   * closed at once, before any config or text: nothing is synthesized, no character billed.
   */
  async probe(): Promise<void> {
    if (this.#closed) throw new SynthesisError("engine closed");
    const ws = await this.#base.openSocket(this.#url, this.#headers());
    ws.close(1000);
  }
}
