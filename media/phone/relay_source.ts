// One leg's audio played into the other while the worker bridges a warm transfer: the caller
// frames a line hears (16 kHz, 320 samples) become the 48 kHz frames a line plays, through the
// same Speex resampler the phone edge uses (edge_audio.ts). A short queue absorbs the two legs'
// clocks drifting apart; beyond it the oldest frame goes, so the delay never grows.
import type { FrameSource } from "../audio/frame_source.ts";
import { BOT_FRAME, CALLER_FRAME, FrameResampler } from "./edge_audio.ts";

/** Frames held at most (120 ms): enough for a late tick, little enough not to be heard. */
const MAX_QUEUED = 6;

export class RelaySource implements FrameSource {
  readonly #queue: Int16Array[] = [];
  readonly #up = new FrameResampler(16_000, 48_000, CALLER_FRAME, BOT_FRAME);
  /** Frames dropped because the queue was full (the far leg's clock runs fast). */
  dropped = 0;

  /** One 20 ms frame heard on the other leg. */
  push(frame16k: Int16Array): void {
    if (frame16k.length !== CALLER_FRAME) return;
    this.#queue.push(frame16k.slice());
    if (this.#queue.length > MAX_QUEUED) {
      this.#queue.shift();
      this.dropped++;
    }
  }

  next(): Int16Array | undefined {
    const frame = this.#queue.shift();
    return frame && this.#up.push(frame);
  }
}
