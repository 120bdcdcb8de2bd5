// The caller's recent audio, kept by the caller-audio unit so the recogniser can be fed from
// before an onset the VAD decided late: audio goes one way (in → ring → recogniser), never back
// out of the VAD. Times are audio time, ms since the first sample pushed, as the VAD counts them
// (both are pushed the same samples from the call's first frame on).
const SAMPLES_PER_MS = 16;

export class PreRoll {
  readonly #ring: Int16Array;
  /** Samples pushed so far; the ring ends at this one. */
  #pushed = 0;

  /** keepMs: how far back since() can reach (older audio is dropped). */
  constructor(keepMs: number) {
    if (!(keepMs >= 0)) throw new RangeError(`keepMs must be >= 0, got ${keepMs}`);
    this.#ring = new Int16Array(Math.ceil(keepMs * SAMPLES_PER_MS));
  }

  /** Audio time of everything pushed so far, in ms. */
  get pushedMs(): number {
    return this.#pushed / SAMPLES_PER_MS;
  }

  /** Copies 16 kHz PCM in (the buffer may be reused by the caller afterwards). */
  push(pcm: Int16Array): void {
    const cap = this.#ring.length;
    const src = pcm.length > cap ? pcm.subarray(pcm.length - cap) : pcm;
    this.#pushed += pcm.length - src.length;
    for (let done = 0; done < src.length;) {
      const at = this.#pushed % cap;
      const n = Math.min(src.length - done, cap - at);
      this.#ring.set(src.subarray(done, done + n), at);
      done += n;
      this.#pushed += n;
    }
  }

  /** Copy of the audio from audio time `fromMs` to now; starts later if that was dropped. */
  since(fromMs: number): Int16Array {
    const cap = this.#ring.length;
    const oldest = Math.max(0, this.#pushed - cap);
    const from = Math.min(this.#pushed, Math.max(oldest, Math.round(fromMs * SAMPLES_PER_MS)));
    const out = new Int16Array(this.#pushed - from);
    for (let done = 0; done < out.length;) {
      const at = (from + done) % cap;
      const n = Math.min(out.length - done, cap - at);
      out.set(this.#ring.subarray(at, at + n), done);
      done += n;
    }
    return out;
  }
}
