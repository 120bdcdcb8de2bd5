// The speech recognition seam of the media worker: a call opens a stream per language, pushes
// the caller's 16 kHz audio while the caller speaks, gets interim text as it goes and the final
// text when the utterance ends. Engines: pocketsphinx.ts (local, English).

export interface RecognitionEngine {
  readonly name: string;
  /** Proto enum names of the languages this engine recognises, e.g. "LANGUAGE_EN". */
  readonly languages: readonly string[];
  /** A stream for one call; throws UnservedLanguageError for a language not served. */
  open(language: string): Promise<RecognitionStream>;
  /** Stops the engine's threads; open streams fail. */
  close(): Promise<void>;
}

export interface RecognitionResult {
  text: string;
  /** Audio recognised in this utterance, in ms. */
  audioMs: number;
}

export interface RecognitionStream {
  /** Adds 16 kHz mono PCM to the utterance in progress (a new one starts with the first push). */
  push(pcm16k: Int16Array): void;
  /** Interim hypotheses of the utterance in progress. */
  onInterim(listener: (text: string) => void): void;
  /** Ends the utterance; resolves with its final text. Later pushes start the next one. */
  finish(): Promise<RecognitionResult>;
  close(): void;
}

export class UnservedLanguageError extends Error {
  constructor(readonly language: string, engine: string, served: readonly string[]) {
    super(`${engine} does not recognise ${language}; served: ${served.join(", ")}`);
    this.name = "UnservedLanguageError";
  }
}
