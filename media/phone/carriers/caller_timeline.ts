// The caller's audio as a provider's stream delivers it (chunks of any size, 20 ms typically,
// stamped with where they sit in the caller's time) made into one frame per 20 ms of that time
// (160 samples at 8 kHz, 320 at 16 kHz): chunks are re-cut into frames, and a gap the timestamps show (a chunk the
// provider never sent) is filled with silence, so the VAD's clock and the recording stay true.

/** 20 ms at 8 kHz. */
export const FRAME_8K = 160;

/**
 * A later chunk up to this far past where the last one ended is taken as on time (a lost chunk
 * of 20 ms stays unfilled; two or more are filled): providers stamp
 * chunks with the time they sent them, which jitters by a few ms (Plivo's are Unix milliseconds).
 */
const GAP_TOLERANCE_MS = 30;

/** The longest gap filled: beyond it the stamps are not the caller's clock (a reset, a bug). */
export const MAX_CONCEALED_MS = 2000;

export class CallerTimeline {
  /** Samples per 20 ms frame, and per ms. */
  readonly #frame: number;
  readonly #perMs: number;
  #pending: Int16Array;
  #length = 0;
  /** The stamp of the first chunk: the caller's time zero. */
  #origin?: number;
  /** Caller time covered so far, in samples (frames emitted and pending). */
  #samples = 0;
  /** Frames of silence put in for gaps. */
  concealedFrames = 0;
  frames = 0;

  constructor(private readonly onFrame: (frame: Int16Array) => void, rate: 8000 | 16000 = 8000) {
    this.#frame = rate / 50;
    this.#perMs = rate / 1000;
    this.#pending = new Int16Array(this.#frame * 64);
  }

  /** One chunk of PCM at the rate; `timestampMs` where the provider stamps it (any origin). */
  push(pcm: Int16Array, timestampMs?: number): void {
    if (timestampMs !== undefined) {
      this.#origin ??= timestampMs;
      const gapMs = timestampMs - this.#origin - this.#samples / this.#perMs;
      if (gapMs > GAP_TOLERANCE_MS && gapMs <= MAX_CONCEALED_MS) {
        // Whole frames only, so the stamps of later chunks keep lining up with the frames.
        const frames = Math.round(gapMs / 20);
        this.concealedFrames += frames;
        this.#append(new Int16Array(frames * this.#frame));
      }
    }
    this.#append(pcm);
  }

  #append(pcm: Int16Array): void {
    this.#samples += pcm.length;
    let from = 0;
    while (from < pcm.length) {
      const take = Math.min(pcm.length - from, this.#pending.length - this.#length);
      this.#pending.set(pcm.subarray(from, from + take), this.#length);
      this.#length += take;
      from += take;
      this.#drain();
    }
  }

  #drain(): void {
    let at = 0;
    while (this.#length - at >= this.#frame) {
      this.frames++;
      // A copy: the listener may keep it, and the buffer is reused.
      this.onFrame(this.#pending.slice(at, at + this.#frame));
      at += this.#frame;
    }
    if (at > 0) {
      this.#pending.copyWithin(0, at, this.#length);
      this.#length -= at;
    }
  }
}
