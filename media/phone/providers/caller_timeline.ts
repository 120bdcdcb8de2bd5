// The caller's audio as a provider's stream delivers it (chunks of any size, 20 ms typically,
// stamped with where they sit in the caller's time) made into one 8 kHz frame per 20 ms of that
// time: chunks are re-cut into 160-sample frames, and a gap the timestamps show (a chunk the
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
  #pending = new Int16Array(FRAME_8K * 64);
  #length = 0;
  /** The stamp of the first chunk: the caller's time zero. */
  #origin?: number;
  /** Caller time covered so far, in samples (frames emitted and pending). */
  #samples = 0;
  /** Frames of silence put in for gaps. */
  concealedFrames = 0;
  frames = 0;

  constructor(private readonly onFrame: (frame: Int16Array) => void) {}

  /** One chunk of 8 kHz PCM; `timestampMs` where the provider stamps it (any origin). */
  push(pcm: Int16Array, timestampMs?: number): void {
    if (timestampMs !== undefined) {
      this.#origin ??= timestampMs;
      const gapMs = timestampMs - this.#origin - this.#samples / 8;
      if (gapMs > GAP_TOLERANCE_MS && gapMs <= MAX_CONCEALED_MS) {
        // Whole frames only, so the stamps of later chunks keep lining up with the frames.
        const frames = Math.round(gapMs / 20);
        this.concealedFrames += frames;
        this.#append(new Int16Array(frames * FRAME_8K));
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
    while (this.#length - at >= FRAME_8K) {
      this.frames++;
      // A copy: the listener may keep it, and the buffer is reused.
      this.onFrame(this.#pending.slice(at, at + FRAME_8K));
      at += FRAME_8K;
    }
    if (at > 0) {
      this.#pending.copyWithin(0, at, this.#length);
      this.#length -= at;
    }
  }
}
