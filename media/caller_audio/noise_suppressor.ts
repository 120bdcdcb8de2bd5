// Noise suppression of the caller's audio before the VAD and recognition: RNNoise (xiph), as
// built to WebAssembly by @jitsi/rnnoise-wasm (Apache-2.0). Its "sync" build carries the WASM
// inline, so it loads in Deno with no browser and no file to locate.
//
// RNNoise works on 480-sample frames at 48 kHz, the call's caller audio is 16 kHz: the stage
// upsamples with the Speex resampler (wasm/resampler.ts), denoises each 10 ms frame and
// downsamples back. That costs two resampler passes (~1 ms per call-second) against decoding
// at 48 kHz and downsampling for the VAD anyway; the receiver stays as it is.
// Latency: RNNoise's 10 ms frame plus the two filters' delay (skip_zeros keeps them aligned);
// the stage's output is the same length as its input over a call, a few ms behind.
import createRNNWasmModuleSync from "@jitsi/rnnoise-wasm/dist/rnnoise-sync.js";
import { Resampler } from "../../wasm/resampler.ts";

interface RnnoiseModule {
  HEAPF32: Float32Array;
  _malloc(n: number): number;
  _free(p: number): void;
  _rnnoise_create(model: number): number;
  _rnnoise_destroy(st: number): void;
  _rnnoise_process_frame(st: number, out: number, inp: number): number;
}

// Once per thread, at import: the inline WASM compiles in ~20 ms.
const rnnoise = (await createRNNWasmModuleSync()) as RnnoiseModule;

/** RNNoise's frame: 10 ms at 48 kHz. */
export const RNNOISE_FRAME = 480;
const RATE = 48_000;

/**
 * One call's denoiser: 16 kHz Int16 in, 16 kHz Int16 out (whatever is ready; over a stream the
 * output matches the input's length less the filters' few ms in flight). `close()` frees it.
 */
export class NoiseSuppressor {
  readonly #up: Resampler;
  readonly #down: Resampler;
  readonly #state: number;
  readonly #frame: number;
  /** 48 kHz samples waiting for a whole RNNoise frame. */
  #pending = new Float32Array(RNNOISE_FRAME);
  #pendingLen = 0;
  #closed = false;

  constructor(readonly inputRate = 16_000) {
    this.#up = new Resampler(inputRate, RATE);
    this.#down = new Resampler(RATE, inputRate);
    this.#state = rnnoise._rnnoise_create(0);
    this.#frame = rnnoise._malloc(RNNOISE_FRAME * 4);
  }

  /** Denoises `pcm` (not kept); returns the denoised audio ready so far (a new array). */
  process(pcm: Int16Array): Int16Array {
    if (this.#closed) return new Int16Array(0);
    const wide = this.#up.process(pcm);
    const out = new Int16Array(wide.length + this.#pendingLen);
    let outLen = 0;
    let i = 0;
    while (i < wide.length) {
      const take = Math.min(RNNOISE_FRAME - this.#pendingLen, wide.length - i);
      for (let k = 0; k < take; k++) this.#pending[this.#pendingLen + k] = wide[i + k];
      this.#pendingLen += take;
      i += take;
      if (this.#pendingLen === RNNOISE_FRAME) {
        this.#denoise(out.subarray(outLen, outLen + RNNOISE_FRAME));
        outLen += RNNOISE_FRAME;
        this.#pendingLen = 0;
      }
    }
    return this.#down.process(out.subarray(0, outLen));
  }

  /** RNNoise on the pending frame (in 16-bit scale, as it expects), written to `into`. */
  #denoise(into: Int16Array): void {
    // The heap view is re-read: a memory growth replaces it.
    const heap = new Float32Array(rnnoise.HEAPF32.buffer, this.#frame, RNNOISE_FRAME);
    heap.set(this.#pending);
    rnnoise._rnnoise_process_frame(this.#state, this.#frame, this.#frame);
    const done = new Float32Array(rnnoise.HEAPF32.buffer, this.#frame, RNNOISE_FRAME);
    for (let k = 0; k < RNNOISE_FRAME; k++) {
      into[k] = Math.max(-32768, Math.min(32767, Math.round(done[k])));
    }
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    rnnoise._free(this.#frame);
    rnnoise._rnnoise_destroy(this.#state);
    this.#up.close();
    this.#down.close();
  }
}
