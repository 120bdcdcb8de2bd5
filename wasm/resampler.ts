/**
 * Streaming sample-rate conversion through the Speex resampler (SpeexDSP, compiled to WASM by
 * @echogarden/speex-resampler-wasm). Used for espeak's 22,050 Hz → 48 kHz and for any other
 * pair of rates the worker needs (e.g. 48 kHz → 16 kHz).
 *
 * The package is an emscripten module (default export = async factory); its API is the plain C
 * one (`speex_resampler_init`, `_process_interleaved_int`, ...) plus `_malloc`/`_free` and the
 * `HEAP*` views. The factory runs once per thread, at import (top-level await), so
 * `new Resampler(...)` is synchronous. The views are re-read after every call because a memory
 * growth replaces them.
 *
 * Output is aligned with input: `skip_zeros` drops the filter's leading delay, and `flush()`
 * feeds silence through the filter to push the tail out, so one stream of N input frames gives
 * exactly round(N · out / in) output frames in total.
 */

import SpeexFactory from "@echogarden/speex-resampler-wasm/simd";

interface SpeexModule {
  HEAP16: Int16Array;
  HEAPU32: Uint32Array;
  HEAP32: Int32Array;
  HEAPU8: Uint8Array;
  _malloc(n: number): number;
  _free(p: number): void;
  _speex_resampler_init(
    channels: number,
    inRate: number,
    outRate: number,
    quality: number,
    errPtr: number,
  ): number;
  _speex_resampler_destroy(st: number): void;
  _speex_resampler_process_interleaved_int(
    st: number,
    inPtr: number,
    inLenPtr: number,
    outPtr: number,
    outLenPtr: number,
  ): number;
  _speex_resampler_skip_zeros(st: number): number;
  _speex_resampler_reset_mem(st: number): number;
  _speex_resampler_get_input_latency(st: number): number;
  _speex_resampler_strerror(code: number): number;
}

const speex = (await SpeexFactory()) as SpeexModule;

function cString(ptr: number): string {
  const heap = speex.HEAPU8;
  let end = ptr;
  while (heap[end] !== 0) end++;
  return new TextDecoder().decode(heap.subarray(ptr, end));
}

/** Thrown when libspeexdsp reports an error (bad rates, bad quality, ...). */
export class ResamplerError extends Error {
  constructor(readonly op: string, readonly code: number) {
    super(`speex resampler ${op} failed: ${cString(speex._speex_resampler_strerror(code))}`);
    this.name = "ResamplerError";
  }
}

export interface ResamplerOptions {
  /** Interleaved channels; default 1. */
  channels?: number;
  /**
   * Speex quality 0 (fastest) … 10 (best); default 5 (Speex's "VoIP" default). Cost per second
   * of audio (bench/media/tts.ts): 22.05 → 48 kHz 1.4 / 2.0 / 3.8 ms at quality 3 / 5 / 8,
   * 48 → 16 kHz 0.26 / 0.41 / 0.75 ms.
   */
  quality?: number;
}

/**
 * One stream of Int16 PCM from `inputRate` to `outputRate`. Feed it with `process()` in pieces
 * of any size, end the stream with `flush()` (the resampler is then ready for a new stream), and
 * `close()` it to free its WASM memory.
 */
export class Resampler {
  readonly channels: number;
  readonly quality: number;
  #st: number;
  // One malloc'd block: [inLen u32][outLen u32], then the in and out sample areas.
  #lens: number;
  #inPtr = 0;
  #inCap = 0;
  #outPtr = 0;
  #outCap = 0;
  #framesIn = 0;
  #framesOut = 0;

  constructor(
    readonly inputRate: number,
    readonly outputRate: number,
    options: ResamplerOptions = {},
  ) {
    this.channels = options.channels ?? 1;
    this.quality = options.quality ?? 5;
    for (const [name, v] of [["input rate", inputRate], ["output rate", outputRate]] as const) {
      if (!Number.isInteger(v) || v <= 0) {
        throw new RangeError(`${name} must be a positive integer`);
      }
    }
    if (!Number.isInteger(this.channels) || this.channels < 1) {
      throw new RangeError("channels must be a positive integer");
    }
    if (!Number.isInteger(this.quality) || this.quality < 0 || this.quality > 10) {
      throw new RangeError("quality must be an integer 0..10");
    }
    this.#lens = speex._malloc(12);
    const errPtr = this.#lens + 8;
    this.#st = speex._speex_resampler_init(
      this.channels,
      inputRate,
      outputRate,
      this.quality,
      errPtr,
    );
    const err = speex.HEAP32[errPtr >> 2];
    if (!this.#st || err !== 0) {
      speex._free(this.#lens);
      throw new ResamplerError("init", err);
    }
    speex._speex_resampler_skip_zeros(this.#st);
  }

  /** Resamples one piece of interleaved input; returns what the filter has ready (may be empty). */
  process(input: Int16Array): Int16Array<ArrayBuffer> {
    this.#open();
    if (input.length % this.channels !== 0) {
      throw new RangeError(`input length ${input.length} is not a multiple of ${this.channels}`);
    }
    const frames = input.length / this.channels;
    this.#framesIn += frames;
    const out = this.#run(input);
    this.#framesOut += out.length / this.channels;
    return out;
  }

  /**
   * Ends the stream: returns the filter's tail so that the stream's total output is
   * round(inputFrames · outputRate / inputRate) frames, then resets for a new stream.
   */
  flush(): Int16Array<ArrayBuffer> {
    this.#open();
    const expected = Math.round(this.#framesIn * this.outputRate / this.inputRate);
    const missing = expected - this.#framesOut;
    let tail = new Int16Array(0);
    if (missing > 0) {
      // The filter holds input_latency frames; pushing that much silence drains them.
      const latency = speex._speex_resampler_get_input_latency(this.#st);
      const pushed = this.#run(new Int16Array((latency + 1) * this.channels));
      tail = new Int16Array(missing * this.channels);
      tail.set(pushed.subarray(0, Math.min(pushed.length, tail.length)));
    }
    this.reset();
    return tail;
  }

  /** Drops any buffered input and starts a new stream. */
  reset(): void {
    this.#open();
    speex._speex_resampler_reset_mem(this.#st);
    speex._speex_resampler_skip_zeros(this.#st);
    this.#framesIn = 0;
    this.#framesOut = 0;
  }

  /** Frees the WASM state; the resampler cannot be used afterwards. Idempotent. */
  close(): void {
    if (!this.#st) return;
    speex._speex_resampler_destroy(this.#st);
    for (const p of [this.#lens, this.#inPtr, this.#outPtr]) if (p) speex._free(p);
    this.#st = 0;
    this.#inPtr =
      this.#outPtr =
      this.#inCap =
      this.#outCap =
        0;
  }

  [Symbol.dispose](): void {
    this.close();
  }

  #open() {
    if (!this.#st) throw new Error("resampler is closed");
  }

  #run(input: Int16Array): Int16Array<ArrayBuffer> {
    const ch = this.channels;
    const inFrames = input.length / ch;
    if (inFrames === 0) return new Int16Array(0);
    // Enough room for the whole piece plus the filter's carried-over state, so one call usually
    // consumes everything; the loop covers the rest.
    const outFramesMax = Math.ceil(inFrames * this.outputRate / this.inputRate) + 64;
    this.#ensure(input.length, outFramesMax * ch);
    speex.HEAP16.set(input, this.#inPtr >> 1);
    const pieces: Int16Array<ArrayBuffer>[] = [];
    let total = 0;
    let done = 0;
    while (done < inFrames) {
      const u32 = speex.HEAPU32;
      u32[this.#lens >> 2] = inFrames - done;
      u32[(this.#lens >> 2) + 1] = outFramesMax;
      const err = speex._speex_resampler_process_interleaved_int(
        this.#st,
        this.#inPtr + done * ch * 2,
        this.#lens,
        this.#outPtr,
        this.#lens + 4,
      );
      if (err !== 0) throw new ResamplerError("process", err);
      const consumed = speex.HEAPU32[this.#lens >> 2];
      const written = speex.HEAPU32[(this.#lens >> 2) + 1];
      if (consumed === 0 && written === 0) break; // cannot happen with room to write; no spin
      done += consumed;
      const at = this.#outPtr >> 1;
      pieces.push(speex.HEAP16.slice(at, at + written * ch));
      total += written * ch;
    }
    if (pieces.length === 1) return pieces[0];
    const out = new Int16Array(total);
    let o = 0;
    for (const p of pieces) {
      out.set(p, o);
      o += p.length;
    }
    return out;
  }

  #ensure(inSamples: number, outSamples: number) {
    if (inSamples > this.#inCap) {
      if (this.#inPtr) speex._free(this.#inPtr);
      this.#inCap = Math.max(inSamples, 4096);
      this.#inPtr = speex._malloc(this.#inCap * 2);
    }
    if (outSamples > this.#outCap) {
      if (this.#outPtr) speex._free(this.#outPtr);
      this.#outCap = Math.max(outSamples, 4096);
      this.#outPtr = speex._malloc(this.#outCap * 2);
    }
  }
}

/** One-shot conversion of a whole buffer (a fresh stream, flushed and closed). */
export function resample(
  input: Int16Array,
  inputRate: number,
  outputRate: number,
  options: ResamplerOptions = {},
): Int16Array<ArrayBuffer> {
  const r = new Resampler(inputRate, outputRate, options);
  try {
    const body = r.process(input);
    const tail = r.flush();
    const out = new Int16Array(body.length + tail.length);
    out.set(body);
    out.set(tail, body.length);
    return out;
  } finally {
    r.close();
  }
}
