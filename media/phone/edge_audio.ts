/**
 * Rate conversion at a phone line's edge, where G.711's 8 kHz meets the pipeline: the caller's
 * 8 kHz audio becomes 16 kHz frames of 320 samples (VAD, recognition, recording), and the bot's
 * 48 kHz frames of 960 samples become 160 G.711 bytes. Both directions are one streaming Speex
 * resampler (wasm/resampler.ts) each, kept for the whole call, so the filter's history carries
 * across frame edges and nothing clicks there.
 *
 * Frame sizes stay exact: the resampler gives a little less than a frame at first (its delay is
 * skipped, a fraction of a millisecond), so the first output frame is topped up with that many
 * zeros at its start, once; from then on the ratios are whole (×2, ÷6) and every frame in gives
 * one frame out. The audio is delayed by the filter's delay only.
 */
import { Resampler } from "../../wasm/resampler.ts";
import { G711_SILENCE, g711Decode, g711Encode, type G711Law } from "./g711.ts";

/** Samples in 20 ms at the line's, the caller frames' and the bot frames' rates. */
export const LINE_FRAME = 160;
export const CALLER_FRAME = 320;
export const BOT_FRAME = 960;

/**
 * Speex quality for the phone edges. 8 kHz speech has nothing above 4 kHz to keep, so the
 * quality that matters is the anti-alias on the way down; 5 is Speex's VoIP default and costs
 * well under 1 ms per second of audio each way (docs/sip.md, bench/phone_media.ts).
 */
export const EDGE_QUALITY = 5;

/** One frame in, one frame out: a streaming resampler cut into fixed frames. */
export class FrameResampler {
  readonly #resampler: Resampler;
  readonly #out: Int16Array;
  /** Output not yet handed out (at most a few samples between frames). */
  #fifo: Int16Array;
  #held = 0;
  #started = false;
  /** Zeros put in front of the first frame (the filter's delay, in output samples). */
  primed = 0;
  /** Samples the resampler fell short by after the first frame (not expected: whole ratios). */
  shortfall = 0;

  constructor(
    inputRate: number,
    outputRate: number,
    readonly inputFrame: number,
    readonly outputFrame: number,
  ) {
    if (inputFrame * outputRate !== outputFrame * inputRate) {
      throw new RangeError(
        `${inputFrame} samples at ${inputRate} Hz are not ${outputFrame} at ${outputRate} Hz`,
      );
    }
    this.#resampler = new Resampler(inputRate, outputRate, { quality: EDGE_QUALITY });
    this.#out = new Int16Array(outputFrame);
    this.#fifo = new Int16Array(outputFrame * 4);
  }

  /** Converts one frame; the result is reused by the next call (copy what you keep). */
  push(frame: Int16Array): Int16Array {
    if (frame.length !== this.inputFrame) {
      throw new RangeError(`a frame is ${this.inputFrame} samples, not ${frame.length}`);
    }
    const got = this.#resampler.process(frame);
    if (this.#held + got.length > this.#fifo.length) {
      const bigger = new Int16Array((this.#held + got.length) * 2);
      bigger.set(this.#fifo.subarray(0, this.#held));
      this.#fifo = bigger;
    }
    this.#fifo.set(got, this.#held);
    this.#held += got.length;
    const out = this.#out;
    const need = this.outputFrame;
    if (this.#held < need) {
      if (!this.#started) {
        // The filter's delay: zeros before the first samples, once.
        this.primed = need - this.#held;
        out.fill(0, 0, this.primed);
        out.set(this.#fifo.subarray(0, this.#held), this.primed);
      } else {
        this.shortfall += need - this.#held;
        out.set(this.#fifo.subarray(0, this.#held));
        out.fill(0, this.#held);
      }
      this.#held = 0;
    } else {
      out.set(this.#fifo.subarray(0, need));
      this.#fifo.copyWithin(0, need, this.#held);
      this.#held -= need;
    }
    this.#started = true;
    return out;
  }

  close(): void {
    this.#resampler.close();
  }
}

/**
 * The caller's side: 8 kHz PCM in pieces of any length (a packet's worth, or a concealed gap)
 * in, one 16 kHz frame of 320 samples out for every 160 samples in.
 */
export class CallerEdge {
  readonly #up = new FrameResampler(8000, 16000, LINE_FRAME, CALLER_FRAME);
  readonly #frame = new Int16Array(LINE_FRAME);
  #filled = 0;
  readonly #decoded = new Int16Array(LINE_FRAME * 3);

  /** `onFrame` gets each 16 kHz frame (a reused buffer: copy what you keep). */
  constructor(readonly law: G711Law, private onFrame: (pcm16k: Int16Array) => void) {}

  /** Decodes a G.711 payload and takes its samples; returns them (8 kHz, valid until the next call). */
  pushPayload(payload: Uint8Array): Int16Array {
    const pcm = payload.length <= this.#decoded.length
      ? g711Decode(this.law, payload, this.#decoded).subarray(0, payload.length)
      : g711Decode(this.law, payload);
    this.pushPcm(pcm);
    return pcm;
  }

  /** Takes 8 kHz samples; emits every whole 20 ms frame they complete. */
  pushPcm(pcm: Int16Array): void {
    let at = 0;
    while (at < pcm.length) {
      const n = Math.min(LINE_FRAME - this.#filled, pcm.length - at);
      this.#frame.set(pcm.subarray(at, at + n), this.#filled);
      this.#filled += n;
      at += n;
      if (this.#filled === LINE_FRAME) {
        this.#filled = 0;
        this.onFrame(this.#up.push(this.#frame));
      }
    }
  }

  close(): void {
    this.#up.close();
  }
}

/** The bot's side: a 48 kHz frame of 960 samples (or silence) in, 160 G.711 bytes out. */
export class BotEdge {
  readonly #down = new FrameResampler(48000, 8000, BOT_FRAME, LINE_FRAME);
  readonly #payload = new Uint8Array(LINE_FRAME);
  readonly #silence: Uint8Array;
  readonly #zeros = new Int16Array(BOT_FRAME);
  /** Silent frames fed since the last sound: once the filter holds only zeros, skip it. */
  #quiet = Infinity;

  constructor(readonly law: G711Law) {
    this.#silence = new Uint8Array(LINE_FRAME).fill(G711_SILENCE[law]);
  }

  /**
   * The G.711 payload for one 20 ms frame (undefined = silence). Valid until the next call.
   * Silence after sound still goes through the filter for two frames, so its tail ends the
   * sound instead of a cut; after that it is one constant payload, and costs nothing.
   */
  encode(frame48k: Int16Array | undefined): Uint8Array {
    if (frame48k === undefined) {
      if (this.#quiet >= 2) return this.#silence;
      this.#quiet++;
      return g711Encode(this.law, this.#down.push(this.#zeros), this.#payload);
    }
    this.#quiet = 0;
    return g711Encode(this.law, this.#down.push(frame48k), this.#payload);
  }

  close(): void {
    this.#down.close();
  }
}
