// The speech synthesis seam of the media worker: a unit of text in, 48 kHz mono audio out in
// chunks, with word timings so the worker can tell which prefix of the unit the caller heard.
// Engines: espeak_engine.ts (local, espeak-ng in WASM).

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

export interface SynthesisEngine {
  readonly name: string;
  /** Proto enum names of the voices and languages this engine serves. */
  readonly voices: readonly string[];
  readonly languages: readonly string[];
  /**
   * Streams one unit. Throws `UnservedError` at once for a voice or language not served.
   * Leaving the loop early (break/return) cancels the synthesis like an abort does.
   */
  synthesize(text: string, options: SynthesisOptions): AsyncIterable<SynthesisChunk>;
  /** Stops all work and frees the engine's threads; open streams fail with `SynthesisError`. */
  close(): Promise<void>;
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
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "SynthesisError";
  }
}
