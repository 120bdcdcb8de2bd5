// The speech recognition seam of the media worker: caller audio (16 kHz mono PCM) in, interim
// and final text out, one stream per call and language, reused for every utterance of the call.
// Engines: pocketsphinx.ts (local, English, Deno FFI in worker threads), sarvam.ts (Sarvam's
// Saaras streaming recognition over WebSocket). media/engines/ routes each language to them.
import type { EngineFault } from "../providers/base/fault.ts";

/** Where an engine runs: on the worker itself, or at a provider reached over the network. */
export type EngineKind = "local" | "provider";

/**
 * The line the caller's audio came over, 16 kHz either way once it reaches recognition: a web
 * call's Opus carries speech up to 8 kHz (wideband), a phone line's G.711 up to 3.4 kHz
 * (narrowband, upsampled at the edge). Engines that adapt to the caller's channel keep what they
 * learn apart per kind (pocketsphinx's first-utterance prior, media/stt/seed_prior.ts).
 */
export type ChannelKind = "wideband" | "narrowband";

/** How a stream is opened beyond its language. */
export interface RecognitionOpenOptions {
  /** Default "wideband" (a web call). */
  channel?: ChannelKind;
}

/** The end of one utterance. */
export interface RecognitionResult {
  /** Final text of the utterance; "" when nothing was recognised (or no audio was pushed). */
  text: string;
  /** Audio pushed for this utterance, in ms (what the usage record counts). */
  audioMs: number;
}

/**
 * One call's recogniser in one language. An utterance is the audio pushed since the previous
 * finish(); the stream keeps what it learnt about the caller's channel across utterances.
 */
export interface RecognitionStream {
  /** Appends 16 kHz mono samples to the current utterance. The array is copied, not kept. */
  push(pcm16k: Int16Array): void;
  /**
   * Called with the best text so far of the current utterance while it is being spoken, at most
   * every few hundred ms of audio and only when it changed. Never after that utterance's finish().
   */
  onInterim(cb: (text: string) => void): void;
  /** Ends the current utterance and resolves with its final text; the next push starts a new one. */
  finish(): Promise<RecognitionResult>;
  /** Frees the stream's recogniser; pending finish() calls reject with RecognitionError. */
  close(): void;
}

export interface RecognitionEngine {
  /** The engine's registry name, e.g. "pocketsphinx"; the record and usage name engines by it. */
  readonly name: string;
  readonly kind: EngineKind;
  /** Proto enum names of the languages served, e.g. "LANGUAGE_EN". */
  readonly languages: readonly string[];
  /** A stream in `language`; rejects with UnservedLanguageError for a language not served. */
  open(language: string, options?: RecognitionOpenOptions): Promise<RecognitionStream>;
  /** Stops all work and frees the engine's threads; open streams fail with RecognitionError. */
  close(): Promise<void>;
  /**
   * A provider's cheapest authenticated request, for its breaker: resolves when the provider
   * accepts the key, rejects with RecognitionError (its `fault` set) when not. Local engines have
   * none.
   */
  probe?(): Promise<void>;
}

/** A language the engine does not serve (the caller's config is wrong, not the engine). */
export class UnservedLanguageError extends Error {
  constructor(readonly language: string, readonly engine: string, served: readonly string[]) {
    super(`${engine} does not recognise language "${language}"; served: ${served.join(", ")}`);
    this.name = "UnservedLanguageError";
  }
}

/** The engine failed (thread died, engine or stream closed, internal error). */
export class RecognitionError extends Error {
  /** Set when reaching the provider was the problem (media/engines/breaker.ts counts it). */
  readonly fault?: EngineFault;
  constructor(message: string, options?: ErrorOptions & { fault?: EngineFault }) {
    super(message, options);
    this.name = "RecognitionError";
    if (options?.fault) this.fault = options.fault;
  }
}
