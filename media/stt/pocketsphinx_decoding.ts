// What the recognition thread does with pocketsphinx, free of messaging so it reads (and tests)
// on its own: a pool of initialised decoders, and one call's recogniser on one of them.
//
// Accuracy notes (measured, media/stt/README.md): the decoder normalises each frame by a live
// cepstral-mean estimate that it updates only at the end of each utterance. A call's first
// utterance is therefore normalised by the model's prior, which fits synthetic and Opus
// speech badly (WER x2-3 against later utterances). So the first utterance's final text comes
// from a second pass over its buffered audio normalised by its own mean (batch CMN); later
// utterances use the live pass, whose estimate has adapted to the caller by then.
import { type DecoderArgs, PsDecoder } from "./pocketsphinx_ffi.ts";

const RATE = 16000;

/**
 * Initialised decoders ready for new calls (ps_init takes 0.2-0.7 s; a call must not wait).
 * Closed calls give their decoder back; beyond `maxIdle` idle decoders it is freed (~90 MB each).
 */
export class DecoderPool {
  #idle: PsDecoder[] = [];
  #inUse = 0;

  constructor(
    readonly args: DecoderArgs,
    readonly spares: number,
    readonly maxIdle: number,
  ) {
    if (spares < 0 || maxIdle < spares) throw new RangeError("need 0 <= spares <= maxIdle");
  }

  get idle(): number {
    return this.#idle.length;
  }

  get inUse(): number {
    return this.#inUse;
  }

  /** A ready decoder; initialises one here and now when none is idle. */
  take(): { decoder: PsDecoder; initMs: number } {
    const t0 = performance.now();
    const decoder = this.#idle.pop() ?? new PsDecoder(this.args);
    this.#inUse++;
    return { decoder, initMs: performance.now() - t0 };
  }

  /** Whether fill() has work (fewer idle decoders than spares). */
  get short(): boolean {
    return this.#idle.length < this.spares;
  }

  /** Initialises one spare if short of them; returns whether it did. */
  fillOne(): boolean {
    if (!this.short) return false;
    this.#idle.push(new PsDecoder(this.args));
    return true;
  }

  /** Back from a closed call: reset to a fresh state and kept, or freed. */
  give(decoder: PsDecoder): void {
    this.#inUse--;
    decoder.end();
    if (this.#idle.length < this.maxIdle && decoder.forgetAdaptation()) {
      this.#idle.push(decoder);
    } else decoder.free();
  }

  /** Frees every idle decoder (decoders in use are freed by give() as their calls close). */
  freeIdle(): void {
    for (const d of this.#idle.splice(0)) d.free();
  }
}

export interface RecogniserOptions {
  /** Interim hypotheses at most once per this much audio. */
  interimMs: number;
  /** The first utterance gets the batch-CMN pass if no longer than this; 0 disables it. */
  firstUtteranceBatchMaxMs: number;
}

/** One call's recognition on one decoder; utterances follow each other. All synchronous. */
export class CallRecogniser {
  #sinceInterim = 0;
  #lastInterim = "";
  #finished = 0;
  /** The first utterance's audio, kept for its batch pass; null once not needed. */
  #firstAudio: Int16Array[] | null = [];
  #firstSamples = 0;

  constructor(readonly decoder: PsDecoder, readonly options: RecogniserOptions) {
    if (options.firstUtteranceBatchMaxMs <= 0) this.#firstAudio = null;
  }

  /** Utterances finished so far. */
  get utterances(): number {
    return this.#finished;
  }

  /** Decodes a chunk; returns a new interim text when one is due and changed, else null. */
  push(pcm: Int16Array): string | null {
    if (pcm.length === 0) return null;
    if (!this.decoder.inUtterance) this.decoder.start();
    this.decoder.process(pcm);
    this.#keepFirst(pcm);
    this.#sinceInterim += pcm.length;
    if (this.#sinceInterim < (this.options.interimMs * RATE) / 1000) return null;
    this.#sinceInterim = 0;
    const text = this.decoder.hyp();
    if (!text || text === this.#lastInterim) return null;
    this.#lastInterim = text;
    return text;
  }

  /** Ends the utterance and returns its final text ("" if it had no audio). */
  finish(): string {
    this.#sinceInterim = 0;
    this.#lastInterim = "";
    if (!this.decoder.inUtterance) return "";
    this.#finished++;
    this.decoder.end();
    let text = this.decoder.hyp();
    const first = this.#firstAudio;
    if (first) {
      this.#firstAudio = null;
      const whole = new Int16Array(this.#firstSamples);
      let at = 0;
      for (const c of first) whole.set(c, (at += c.length) - c.length);
      this.decoder.start();
      this.decoder.process(whole, true);
      this.decoder.end();
      text = this.decoder.hyp();
    }
    return text;
  }

  #keepFirst(pcm: Int16Array): void {
    if (!this.#firstAudio) return;
    this.#firstSamples += pcm.length;
    if (this.#firstSamples > (this.options.firstUtteranceBatchMaxMs * RATE) / 1000) {
      this.#firstAudio = null; // too long to wait for a second pass: the live result stands
    } else this.#firstAudio.push(pcm);
  }
}
