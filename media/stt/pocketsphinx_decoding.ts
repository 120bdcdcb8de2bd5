// What the recognition thread does with pocketsphinx, free of messaging so it reads (and tests)
// on its own: a pool of initialised decoders, and one call's recogniser, which holds a decoder
// only while its caller speaks.
//
// Decoders per utterance (media/stt/README.md): a decoder is ~50-90 MB, and a call needs one
// only between its caller's speech start and end of turn. What a call learns about its channel
// between utterances is the live cepstral-mean (CMN) state (mean, sum, frame count), which the
// recogniser keeps and puts into whichever decoder serves its next utterance; the stream (noise
// estimate) restarts at every utterance so nothing else carries over. Decoders then number the
// callers speaking at once, not the calls.
//
// First utterances: the decoder normalises each frame by a live CMN estimate that it updates only
// at the end of each utterance, so a call's first utterance is normalised by a prior. The
// model's own prior fits synthetic and Opus speech badly (WER x2-3 against later utterances);
// the pool learns a warm prior from the adapted estimates of the thread's earlier calls
// (`warmPrior`), which recognises first utterances as well as a second pass over their buffered
// audio normalised by their own mean (batch CMN, `firstUtteranceBatchMaxMs`) at half the CPU
// and without the wait at finish. The second pass is therefore made only for first utterances
// that start cold: the thread's first calls, before it learnt a prior (or with warmPrior off).
//
// Priors per channel kind: phone audio (8 kHz G.711, upsampled) has no energy above 3.4 kHz, so
// its cepstral mean is far from a web call's; a prior learnt from one kind fits the other badly
// (bench/media/phone_recognition.ts). The pool keeps one seed and one learnt prior per kind, and a
// call learns into, and starts from, its own kind's only.
import { type CmnState, type DecoderArgs, PsDecoder, SharedLm } from "./pocketsphinx_ffi.ts";
import type { ChannelKind } from "./engine.ts";

const RATE = 16000;

export interface PoolOptions {
  /** Initialised idle decoders kept ready (ps_init takes 0.2-0.7 s; an utterance must not wait). */
  spares: number;
  /** Idle decoders kept at most; decoders given back beyond are freed. */
  maxIdle: number;
  /** Idle decoders beyond `spares` are freed by trim() after this long unused. */
  idleMs?: number;
  /** One language model read once and searched by all the pool's decoders (default false). */
  shareLm?: boolean;
  /** Learn a first-utterance CMN prior from the calls' adapted estimates (default true). */
  warmPrior?: boolean;
  /**
   * With warmPrior: per channel kind, the prior a thread starts from before any call of that
   * kind taught it one (a CMN mean for the model's features, media/stt/seed_prior.ts), replaced
   * whole by the first such call's. A kind without a seed starts cold.
   */
  seedPriors?: Partial<Record<ChannelKind, readonly number[]>>;
}

/**
 * Initialised decoders for the utterances of one thread's calls, optionally sharing one LM.
 * Decoders given back are kept idle up to `maxIdle`; trim() frees those beyond `spares` that
 * stayed unused for `idleMs`.
 */
export class DecoderPool {
  #idle: { decoder: PsDecoder; since: number }[] = [];
  #inUse = 0;
  #lm: SharedLm | null = null;
  /** The warm prior per channel kind, and how many calls taught it (up to 50). */
  #warm = new Map<ChannelKind, { mean: Float32Array; learnt: number }>();
  /** Decoders initialised so far. */
  made = 0;
  /** take() calls that found no idle decoder and initialised one then and there. */
  waited = 0;
  readonly spares: number;
  readonly maxIdle: number;
  readonly idleMs: number;
  readonly shareLm: boolean;
  readonly warmPrior: boolean;

  constructor(readonly args: DecoderArgs, options: PoolOptions) {
    this.spares = options.spares;
    this.maxIdle = options.maxIdle;
    this.idleMs = options.idleMs ?? 60_000;
    this.shareLm = options.shareLm ?? false;
    this.warmPrior = options.warmPrior ?? true;
    for (const [kind, seed] of Object.entries(options.seedPriors ?? {})) {
      if (this.warmPrior && seed) {
        this.#warm.set(kind as ChannelKind, { mean: Float32Array.from(seed), learnt: 0 });
      }
    }
    if (this.spares < 0 || this.maxIdle < this.spares) {
      throw new RangeError("need 0 <= spares <= maxIdle");
    }
  }

  get idle(): number {
    return this.#idle.length;
  }

  get inUse(): number {
    return this.#inUse;
  }

  /** The shared language model, once the first decoder read it (null with shareLm off). */
  get lm(): SharedLm | null {
    return this.#lm;
  }

  /** A ready decoder; initialises one here and now when none is idle. */
  take(): { decoder: PsDecoder; initMs: number } {
    const t0 = performance.now();
    let decoder = this.#idle.pop()?.decoder;
    if (!decoder) {
      this.waited++;
      decoder = this.#make();
    }
    this.#inUse++;
    return { decoder, initMs: performance.now() - t0 };
  }

  /** Whether fillOne() has work (fewer idle decoders than spares). */
  get short(): boolean {
    return this.#idle.length < this.spares;
  }

  /** Initialises one spare if short of them; returns whether it did. */
  fillOne(): boolean {
    if (!this.short) return false;
    this.#idle.push({ decoder: this.#make(), since: performance.now() });
    return true;
  }

  /** Back from an utterance or a call: kept idle (the next user sets its own state), or freed. */
  give(decoder: PsDecoder): void {
    this.#inUse--;
    decoder.end();
    if (this.#idle.length < this.maxIdle && decoder.canForgetAdaptation) {
      this.#idle.push({ decoder, since: performance.now() });
    } else decoder.free();
  }

  /** Frees idle decoders beyond the spares that were unused for idleMs; returns how many. */
  trim(now = performance.now()): number {
    let freed = 0;
    // Oldest first: the most recently given back are the likeliest to be taken soon.
    while (this.#idle.length > this.spares && now - this.#idle[0].since >= this.idleMs) {
      this.#idle.shift()!.decoder.free();
      freed++;
    }
    return freed;
  }

  /**
   * The CMN state a call's first utterance on `channel` starts from: the warm prior learnt from
   * earlier calls of that kind (or its seed), counted as no frames (the call's own first
   * utterance replaces it entirely), or null for the model's prior.
   */
  firstState(channel: ChannelKind = "wideband"): CmnState | null {
    const warm = this.warmPrior ? this.#warm.get(channel) : undefined;
    if (!warm) return null;
    return { mean: warm.mean.slice(), sum: new Float32Array(warm.mean.length), frames: 0 };
  }

  /** A call's estimate after its first utterance: its kind's warm prior moves towards it. */
  learn(mean: Float32Array, channel: ChannelKind = "wideband"): void {
    if (!this.warmPrior) return;
    const warm = this.#warm.get(channel);
    if (!warm) return void this.#warm.set(channel, { mean: mean.slice(), learnt: 1 });
    // A running mean over the first calls, then an exponential one over about the last 50.
    warm.learnt = Math.min(warm.learnt + 1, 50);
    for (let i = 0; i < mean.length; i++) warm.mean[i] += (mean[i] - warm.mean[i]) / warm.learnt;
  }

  /** Frees every idle decoder and drops the pool's reference to the shared model (decoders in
   * use keep it alive until given back). */
  close(): void {
    for (const { decoder } of this.#idle.splice(0)) decoder.free();
    this.#lm?.release();
    this.#lm = null;
  }

  #make(): PsDecoder {
    const t = this.shareLm && this.args.lm;
    let decoder: PsDecoder;
    if (!t) decoder = new PsDecoder(this.args);
    else if (this.#lm) decoder = new PsDecoder(this.args, this.#lm);
    else {
      // The first decoder lends its configuration and log base to read the shared model.
      const { lm: path, ...rest } = this.args;
      decoder = new PsDecoder(rest);
      try {
        this.#lm = new SharedLm(path, decoder);
        decoder.useLm(this.#lm);
      } catch (e) {
        decoder.free();
        throw e;
      }
    }
    this.made++;
    return decoder;
  }
}

export interface RecogniserOptions {
  /** Interim hypotheses at most once per this much audio. */
  interimMs: number;
  /**
   * A first utterance that starts from the model's prior (no warm prior learnt yet) gets the
   * batch-CMN pass if no longer than this; 0 disables it.
   */
  firstUtteranceBatchMaxMs: number;
  /**
   * Keep one decoder for the whole call (the former scheme, for comparison in the bench), not
   * one per utterance. Also the fallback where the CMN state is unreachable.
   */
  decoderPerCall?: boolean;
}

/** One call's recognition; utterances follow each other. All synchronous. */
export class CallRecogniser {
  #decoder: PsDecoder | null = null;
  #adaptation: CmnState | null = null;
  #sinceInterim = 0;
  #lastInterim = "";
  #finished = 0;
  /** The first utterance's audio, kept for its batch pass; null once not needed. */
  #firstAudio: Int16Array[] | null = [];
  #firstSamples = 0;
  #closed = false;

  constructor(
    readonly pool: DecoderPool,
    readonly options: RecogniserOptions,
    /** The caller's line: the pool's prior of this kind is the one used and taught. */
    readonly channel: ChannelKind = "wideband",
  ) {
    if (options.firstUtteranceBatchMaxMs <= 0) this.#firstAudio = null;
  }

  /** Utterances finished so far. */
  get utterances(): number {
    return this.#finished;
  }

  /** The decoder held now: during an utterance (or for the whole call with decoderPerCall). */
  get decoder(): PsDecoder | null {
    return this.#decoder;
  }

  /** The call's adaptation, as the next utterance's decoder will get it (null: a prior). */
  get adaptation(): CmnState | null {
    return this.#adaptation;
  }

  /** Decodes a chunk; returns a new interim text when one is due and changed, else null. */
  push(pcm: Int16Array): string | null {
    if (pcm.length === 0 || this.#closed) return null;
    if (!this.#decoder?.inUtterance) this.#startUtterance();
    const decoder = this.#decoder!;
    decoder.process(pcm);
    this.#keepFirst(pcm);
    this.#sinceInterim += pcm.length;
    if (this.#sinceInterim < (this.options.interimMs * RATE) / 1000) return null;
    this.#sinceInterim = 0;
    const text = decoder.hyp();
    if (!text || text === this.#lastInterim) return null;
    this.#lastInterim = text;
    return text;
  }

  /** Ends the utterance and returns its final text ("" if it had no audio). */
  finish(): string {
    this.#sinceInterim = 0;
    this.#lastInterim = "";
    const decoder = this.#decoder;
    if (!decoder?.inUtterance) return "";
    this.#finished++;
    decoder.end();
    let text = decoder.hyp();
    const first = this.#firstAudio;
    if (first) {
      this.#firstAudio = null;
      const whole = new Int16Array(this.#firstSamples);
      let at = 0;
      for (const c of first) whole.set(c, (at += c.length) - c.length);
      decoder.start();
      decoder.process(whole, true);
      decoder.end();
      text = decoder.hyp();
    }
    if (!this.#pinned(decoder)) {
      this.#adaptation = decoder.adaptation();
      if (this.#finished === 1 && this.#adaptation) {
        this.pool.learn(this.#adaptation.mean, this.channel);
      }
      this.pool.give(decoder);
      this.#decoder = null;
    }
    return text;
  }

  /** Gives back a decoder still held (an utterance never finished, or decoderPerCall). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#decoder) this.pool.give(this.#decoder);
    this.#decoder = null;
  }

  #pinned(decoder: PsDecoder): boolean {
    return !!this.options.decoderPerCall || !decoder.canForgetAdaptation;
  }

  #startUtterance(): void {
    if (!this.#decoder) {
      const { decoder } = this.pool.take();
      this.#decoder = decoder;
      if (!this.#pinned(decoder)) {
        // A new stream and the call's own CMN state: what this decoder did before is gone.
        decoder.restartStream();
        const state = this.#adaptation ?? this.pool.firstState(this.channel);
        // Started warm: the second pass would not pay (media/stt/README.md).
        if (state && this.#finished === 0) this.#firstAudio = null;
        decoder.adapt(state);
      } else decoder.forgetAdaptation(); // ps_init's state, as the former scheme had it
    }
    this.#decoder.start();
  }

  #keepFirst(pcm: Int16Array): void {
    if (!this.#firstAudio) return;
    this.#firstSamples += pcm.length;
    if (this.#firstSamples > (this.options.firstUtteranceBatchMaxMs * RATE) / 1000) {
      this.#firstAudio = null; // too long to wait for a second pass: the live result stands
    } else this.#firstAudio.push(pcm);
  }
}
