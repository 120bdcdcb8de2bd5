// The speech synthesis seam of the media worker: a unit of text in, 48 kHz mono audio out in
// chunks, with word timings so the worker can tell which prefix of the unit the caller heard.
// Engines: espeak_engine.ts (local, espeak-ng through emscripten), sarvam.ts (Sarvam's Bulbul),
// indic_parler.ts (a self-hosted Indic Parler-TTS endpoint). media/engines/ routes to them.
import type { EngineKind } from "../stt/engine.ts";
import type { EngineFault } from "../providers/base/fault.ts";

export type { EngineKind };

/** A word of a unit: where it lies in the unit's text and in the unit's audio. */
export interface WordTiming {
  /** `unitText.slice(charStart, charEnd)`. */
  text: string;
  /** UTF-16 offsets into the text given to `synthesize` (end exclusive). */
  charStart: number;
  charEnd: number;
  /** Offsets into the unit's 48 kHz audio, in ms from its first sample. */
  startMs: number;
  /** Where the word's sound ends (a following pause is not part of the word). */
  endMs: number;
  /**
   * True when the engine gave no timing for this word and it was estimated from the audio's
   * length (tts/estimated_timing.ts); the record marks heard text built on it as estimated.
   */
  estimated?: boolean;
}

export interface SynthesisChunk {
  /** 48 kHz mono; consecutive chunks are consecutive audio. May be empty (words only). */
  pcm: Int16Array;
  /**
   * Words whose timing became final with this chunk, in text order. A word's audio may extend
   * into later chunks; every word of the unit is reported by the last chunk.
   */
  words: WordTiming[];
}

export interface SynthesisOptions {
  /** Proto enum name, e.g. "VOICE_ANANYA"; must be one of `engine.voices`. */
  voice: string;
  /** Proto enum name, e.g. "LANGUAGE_HI"; must be one of `engine.languages`. */
  language: string;
  /** Aborting stops synthesis promptly; the stream then throws `signal.reason`. */
  signal?: AbortSignal;
}

/**
 * What an engine speaks: language → persona → the engine's own voice for it (a provider speaker
 * name, an espeak variant). A persona missing under a language is not served in it.
 */
export type SynthesisCatalog = Readonly<Record<string, Readonly<Record<string, string>>>>;

export interface SynthesisEngine {
  /** The engine's registry name, e.g. "espeak-ng"; the record and usage name engines by it. */
  readonly name: string;
  readonly kind: EngineKind;
  /** Language × persona → the engine's voice; the truth the capabilities are built from. */
  readonly catalog: SynthesisCatalog;
  /**
   * Language → the related language whose voice speaks it, for catalog languages the engine has
   * no voice of its own for (a related-language fallback); absent or unlisted: its own voice.
   */
  readonly related?: Readonly<Record<string, string>>;
  /** Proto enum names of the voices and languages this engine serves (from the catalog). */
  readonly voices: readonly string[];
  readonly languages: readonly string[];
  /** Whether audio arrives while the unit is still being made (else all at once at the end). */
  readonly streaming: boolean;
  /** The rate the engine makes audio at (chunks are always resampled to 48 kHz). */
  readonly sampleRate: number;
  /** "engine": word timings come from the engine; "estimated": from the audio's length. */
  readonly wordTimings: "engine" | "estimated";
  /**
   * Streams one unit. Throws `UnservedError` at once for a voice or language not served.
   * Leaving the loop early (break/return) cancels the synthesis like an abort does.
   */
  synthesize(text: string, options: SynthesisOptions): AsyncIterable<SynthesisChunk>;
  /** Stops all work and frees the engine's threads; open streams fail with `SynthesisError`. */
  close(): Promise<void>;
  /**
   * A provider's cheapest authenticated request, for its breaker: resolves when the provider
   * accepts the key, rejects with SynthesisError (its `fault` set) when not. Local engines have
   * none.
   */
  probe?(): Promise<void>;
}

/** The personas and the languages of a catalog, each once. */
export function catalogNames(catalog: SynthesisCatalog): { voices: string[]; languages: string[] } {
  const languages = Object.keys(catalog);
  const voices = [...new Set(languages.flatMap((l) => Object.keys(catalog[l])))];
  return { voices, languages };
}

/** Whether `catalog` speaks `language` in `voice`. */
export function catalogServes(catalog: SynthesisCatalog, language: string, voice: string): boolean {
  return Object.hasOwn(catalog, language) && Object.hasOwn(catalog[language], voice);
}

/**
 * The engine's own voice for `language` in `voice`; throws UnservedError (naming what is served)
 * when its catalog lacks either.
 */
export function servedVoice(
  engine: Pick<SynthesisEngine, "name" | "catalog" | "languages">,
  language: string,
  voice: string,
): string {
  if (!Object.hasOwn(engine.catalog, language)) {
    throw new UnservedError("language", language, engine.name, engine.languages);
  }
  if (!catalogServes(engine.catalog, language, voice)) {
    throw new UnservedError("voice", voice, engine.name, Object.keys(engine.catalog[language]));
  }
  return engine.catalog[language][voice];
}

/** A voice or language the engine does not serve (the caller's config is wrong, not the engine). */
export class UnservedError extends Error {
  constructor(
    readonly kind: "voice" | "language",
    readonly value: string,
    readonly engine: string,
    served: readonly string[],
  ) {
    super(`${engine} does not serve ${kind} "${value}"; served: ${served.join(", ")}`);
    this.name = "UnservedError";
  }
}

/** The engine failed (thread died, engine closed, internal error). */
export class SynthesisError extends Error {
  /** Set when reaching the provider was the problem (media/engines/breaker.ts counts it). */
  readonly fault?: EngineFault;
  constructor(message: string, options?: ErrorOptions & { fault?: EngineFault }) {
    super(message, options);
    this.name = "SynthesisError";
    if (options?.fault) this.fault = options.fault;
  }
}
