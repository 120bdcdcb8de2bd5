// AI4Bharat's Indic Parler-TTS, self-hosted behind an OpenAI-compatible speech endpoint: one
// HTTP request per part of a unit, WAV back, resampled to 48 kHz as it arrives.
//
// The model (https://huggingface.co/ai4bharat/indic-parler-tts, the model card): Parler-TTS Mini
// fine-tuned for 20 Indic languages and English (Assamese, Bengali, Bodo, Dogri, English,
// Gujarati, Hindi, Kannada, Konkani, Maithili, Malayalam, Manipuri, Marathi, Nepali, Odia,
// Sanskrit, Santali, Sindhi, Tamil, Telugu, Urdu: not Punjabi or Kashmiri). It takes two inputs,
// the text and a caption describing the voice; naming one of the card's speakers in the caption
// ("Divya speaks...") keeps the voice the same from one generation to the next. Its codec is the
// 44.1 kHz DAC of Parler-TTS Mini (parler-tts/dac_44khZ_8kbps in the Parler-TTS Mini configs).
//
// The model has no HTTP server of its own, so the adapter speaks the OpenAI "create speech"
// contract (https://platform.openai.com/docs/api-reference/audio/createSpeech) that self-hosted
// Parler servers expose (e.g. github.com/fedirz/parler-tts-server), with the caption as `voice`:
//
//   POST {url}/v1/audio/speech
//        Content-Type: application/json, Accept: audio/wav
//        Authorization: Bearer <key>                      only when a key is configured
//        {"model":"ai4bharat/indic-parler-tts","input":"<text>",
//         "voice":"Divya speaks with a clear voice ... very close up.","response_format":"wav"}
//   200  audio/wav: RIFF/WAVE PCM16 mono at the model's rate (read from the header), whole or
//        chunked; a streamed WAV may give its data size as 0 or 0xFFFFFFFF (read to the end)
//   4xx/5xx  {"error":{"message":"...","code":"..."}} (OpenAI's shape; FastAPI's {"detail"} too)
//
// Decisions:
// - Per language and persona, a speaker the card recommends for that language, female for
//   Ananya and male for Arjun (the card names speakers without genders: the names are taken
//   as such). A persona is served only where the card names a speaker for it: an unnamed
//   caption ("A female speaker...") gives a different voice every unit. So Dogri, Manipuri and
//   Sanskrit have Arjun only, Nepali and Tamil Ananya only, and Konkani, Maithili, Santali,
//   Sindhi and Urdu (no named speakers) neither; `speakers` can add them.
// - A long unit is cut at sentence ends into requests of at most maxCharsPerRequest (250)
//   characters: Parler makes at most ~30 s per generation, and a server that answers only once
//   the file is made answers sooner for a shorter part. The parts are requested one after the
//   other; each part's words are estimated over its own audio and reported with its last chunk.
// - Timeouts: fetch cannot tell connecting from waiting for the first byte, so the response
//   headers may take connectTimeoutMs + readTimeoutMs (5 s + 20 s: a server that generates the
//   whole part before answering sends nothing until then); then any readTimeoutMs without a
//   byte fails the unit.
// - The key is only ever a header: never in a URL or an error message.
import {
  catalogNames,
  servedVoice,
  type SynthesisCatalog,
  type SynthesisChunk,
  type SynthesisEngine,
  SynthesisError,
  type SynthesisOptions,
  type WordTiming,
} from "../../tts/engine.ts";
import { estimateWordTimings } from "../../tts/estimated_timing.ts";
import {
  AudioFormatError,
  PcmDecoder,
  type SpeakerOverrides,
  type TextPart,
  textParts,
  withSpeakers,
} from "../../tts/provider_audio.ts";
import { ProviderBase } from "../base/provider.ts";
import { untilAborted } from "../../../common/until_aborted.ts";
import { statusFault } from "../base/fault.ts";
import { INDIC_PARLER_CATALOG, INDIC_PARLER_LANGUAGES } from "./languages.ts";

export { INDIC_PARLER_CATALOG, INDIC_PARLER_LANGUAGES };

/** The caption for a speaker, in the card's style; `{speaker}` is replaced by the name. */
export const DEFAULT_PARLER_DESCRIPTION = "{speaker} speaks with a clear voice at a moderate " +
  "pace and pitch. The recording is of very high quality, with the speaker's voice sounding " +
  "clear and very close up.";

export interface IndicParlerOptions {
  /** Base URL of the self-hosted server, e.g. http://parler:8000 (the path is appended). */
  url: string;
  /** Sent as a Bearer token when set (the registry reads INDIC_PARLER_API_KEY). */
  apiKey?: string;
  /** The request's `model`; default ai4bharat/indic-parler-tts. */
  model?: string;
  /** The caption template; default DEFAULT_PARLER_DESCRIPTION. */
  description?: string;
  /** Longest text per request; default 250 characters. */
  maxCharsPerRequest?: number;
  /** Part of the wait for the response headers (see above); default 5000 ms. */
  connectTimeoutMs?: number;
  /** Longest wait for a byte; default 20000 ms. */
  readTimeoutMs?: number;
  /** Language → persona → speaker, over the card's. */
  speakers?: SpeakerOverrides;
}

interface OpenAiError {
  error?: { message?: unknown; code?: unknown; type?: unknown } | string;
  detail?: unknown;
}

export class IndicParlerEngine implements SynthesisEngine {
  readonly name = "indic-parler";
  readonly kind = "provider";
  readonly catalog: SynthesisCatalog;
  readonly voices: readonly string[];
  readonly languages: readonly string[];
  /** Parler servers answer with a unit's audio once it is made (chunks are passed on anyway). */
  readonly streaming = false;
  /** Parler-TTS Mini's DAC rate; each response's WAV header is what is used. */
  readonly sampleRate = 44_100;
  readonly wordTimings = "estimated";
  readonly model: string;
  #base: ProviderBase<SynthesisError>;
  #url: string;
  #description: string;
  #maxChars: number;
  #readMs: number;
  #units = new Set<AbortController>();
  #closed = false;

  constructor(options: IndicParlerOptions) {
    if (!options.url) throw new RangeError("Indic Parler needs the URL of its server");
    this.#base = new ProviderBase("Indic Parler", SynthesisError, {
      url: new URL(options.url).href.replace(/\/$/, ""),
      apiKey: options.apiKey || undefined,
      connectTimeoutMs: options.connectTimeoutMs ?? 5000,
    });
    this.#url = `${this.#base.connection.url}/v1/audio/speech`;
    this.model = options.model ?? "ai4bharat/indic-parler-tts";
    this.#description = options.description ?? DEFAULT_PARLER_DESCRIPTION;
    this.#maxChars = options.maxCharsPerRequest ?? 250;
    this.#readMs = options.readTimeoutMs ?? 20_000;
    this.catalog = withSpeakers(
      INDIC_PARLER_CATALOG,
      options.speakers,
      (l) => INDIC_PARLER_LANGUAGES.includes(l) || l === "LANGUAGE_PA",
    );
    ({ voices: this.voices, languages: this.languages } = catalogNames(this.catalog));
  }

  synthesize(text: string, options: SynthesisOptions): AsyncIterable<SynthesisChunk> {
    const { voice, language, signal } = options;
    const speaker = servedVoice(this, language, voice);
    if (this.#closed) throw new SynthesisError("engine closed");
    const caption = this.#description.replaceAll("{speaker}", speaker);
    return this.#unit(text, caption, signal);
  }

  /** Aborts every open unit's request; their streams fail with SynthesisError. */
  close(): Promise<void> {
    this.#closed = true;
    for (const ac of [...this.#units]) ac.abort(new SynthesisError("engine closed"));
    return Promise.resolve();
  }

  async *#unit(
    text: string,
    caption: string,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<SynthesisChunk> {
    if (signal?.aborted) throw signal.reason;
    if (!/\S/.test(text)) return;
    const ac = new AbortController();
    const onAbort = () => ac.abort(signal!.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    this.#units.add(ac);
    let atMs = 0;
    try {
      for (const part of textParts(text, this.#maxChars)) {
        const partText = text.slice(part.start, part.end);
        if (!/[\p{L}\p{N}]/u.test(partText)) { // nothing to speak: its tokens take no time
          yield { pcm: new Int16Array(0), words: shift(partText, part, 0, atMs) };
          continue;
        }
        const pcm = new PcmDecoder({ wav: "required" });
        try {
          const body = await this.#request(partText, caption, ac);
          const reader = body.getReader();
          while (true) {
            const { done, value } = await this.#read(reader, ac);
            if (done) break;
            const out = pcm.push(value);
            if (out.length) yield { pcm: out, words: [] };
            if (ac.signal.aborted) throw ac.signal.reason;
          }
          const tail = pcm.end();
          yield { pcm: tail, words: shift(partText, part, pcm.durationMs, atMs) };
          atMs += pcm.durationMs;
        } finally {
          pcm.close();
        }
      }
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      if (ac.signal.aborted && ac.signal.reason instanceof SynthesisError) throw ac.signal.reason;
      if (err instanceof SynthesisError) throw err;
      if (err instanceof AudioFormatError) {
        throw new SynthesisError(`Indic Parler sent malformed audio: ${err.message}`);
      }
      throw this.#base.error(`Indic Parler's connection failed: ${(err as Error).message}`, {
        cause: err,
        fault: "connection",
      });
    } finally {
      signal?.removeEventListener("abort", onAbort);
      this.#units.delete(ac);
      ac.abort(new SynthesisError("unit over")); // an early exit cancels the request
    }
  }

  /** POSTs one part; the response body once its status is 2xx. */
  async #request(
    input: string,
    voice: string,
    ac: AbortController,
  ): Promise<ReadableStream<Uint8Array>> {
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "audio/wav",
    };
    const key = this.#base.connection.apiKey;
    if (key) headers.authorization = `Bearer ${key}`;
    const waitMs = this.#base.connection.connectTimeoutMs + this.#readMs;
    const timer = setTimeout(
      () =>
        ac.abort(
          this.#base.error(`Indic Parler did not answer in ${waitMs} ms`, { fault: "connection" }),
        ),
      waitMs,
    );
    try {
      const res = await fetch(this.#url, {
        method: "POST",
        headers,
        body: JSON.stringify({ model: this.model, input, voice, response_format: "wav" }),
        signal: ac.signal,
      });
      if (!res.ok || !res.body) {
        throw await this.#failure(res);
      }
      return res.body;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * One read, failed after readTimeoutMs without a byte or at once when the unit is aborted. The
   * read is raced against the unit's signal, not only ended by the request's abort (see
   * untilAborted).
   */
  async #read(reader: ReadableStreamDefaultReader<Uint8Array>, ac: AbortController) {
    const timer = setTimeout(
      () => ac.abort(new SynthesisError(`Indic Parler sent nothing for ${this.#readMs} ms`)),
      this.#readMs,
    );
    try {
      return await untilAborted(reader.read(), ac.signal);
    } catch (err) {
      reader.cancel(err).catch(() => {}); // lets the server go even if the abort did not
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * The breaker's probe: a request with an empty input, which the server refuses before making
   * any audio (400/422), after checking the key (401/403). Up: any answer but those and a 5xx.
   */
  async probe(): Promise<void> {
    if (this.#closed) throw new SynthesisError("engine closed");
    const headers: Record<string, string> = { "content-type": "application/json" };
    const key = this.#base.connection.apiKey;
    if (key) headers.authorization = `Bearer ${key}`;
    let res: Response;
    try {
      res = await fetch(this.#url, {
        method: "POST",
        headers,
        body: JSON.stringify({ model: this.model, input: "", voice: "", response_format: "wav" }),
        signal: AbortSignal.timeout(this.#base.connection.connectTimeoutMs),
      });
    } catch (err) {
      throw this.#base.error(`Indic Parler's connection failed: ${(err as Error).message}`, {
        fault: "connection",
      });
    }
    if (statusFault(res.status)) throw await this.#failure(res);
    await res.body?.cancel();
  }

  /** What an error response says: its status, and the OpenAI-style code and message if any. */
  async #failure(res: Response): Promise<SynthesisError> {
    let text = "";
    try {
      text = (await res.text()).slice(0, 2000);
    } catch { /* the status says enough */ }
    let code = "", message = text.trim();
    try {
      const body = JSON.parse(text) as OpenAiError;
      if (typeof body.error === "string") message = body.error;
      else if (body.error) {
        if (typeof body.error.code === "string") code = ` ${body.error.code}`;
        if (typeof body.error.message === "string") message = body.error.message;
      } else if (body.detail !== undefined) {
        message = typeof body.detail === "string" ? body.detail : JSON.stringify(body.detail);
      }
    } catch { /* not JSON: the text itself */ }
    const said = message ? `: ${this.#base.redact(message).slice(0, 300)}` : "";
    return this.#base.statusError(res.status, `${code}${said}`);
  }
}

/** A part's estimated words, moved to the unit's text offsets and audio time. */
function shift(partText: string, part: TextPart, ms: number, atMs: number): WordTiming[] {
  return estimateWordTimings(partText, ms).map((w) => ({
    ...w,
    charStart: w.charStart + part.start,
    charEnd: w.charEnd + part.start,
    startMs: w.startMs + atMs,
    endMs: w.endMs + atMs,
  }));
}
