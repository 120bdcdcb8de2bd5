// The echo diagnostic (brain URL `echo:`): the caller's own audio comes back after a delay, so
// a page can check its microphone, the network path and playout without any brain.
import { FRAME_SAMPLES_48K } from "../../wasm/opus.ts";
import type { FrameSource } from "../audio/frame_source.ts";

export class EchoSource implements FrameSource {
  private frames: Int16Array[] = [];
  /** Frames handed back by next(), reused by push(): no allocation per frame once warm. */
  private spare: Int16Array[] = [];
  /** The frame next() returned last: the outbound side is done with it by the next call. */
  private lent?: Int16Array;
  private startedAt?: number;

  /** `delayMs` of the caller's audio is held back before playback starts. */
  constructor(private delayMs = 500, private maxQueuedMs = 3000) {}

  /** One decoded 20 ms frame of the caller at 48 kHz (copied: decoders reuse buffers). */
  push(pcm48k: Int16Array, now = performance.now()): void {
    this.startedAt ??= now;
    const frame = this.spare.pop() ?? new Int16Array(FRAME_SAMPLES_48K);
    const n = Math.min(pcm48k.length, FRAME_SAMPLES_48K);
    frame.set(n === pcm48k.length ? pcm48k : pcm48k.subarray(0, n));
    if (n < FRAME_SAMPLES_48K) frame.fill(0, n);
    this.frames.push(frame);
    // Bound the queue: a stalled outbound side must not grow memory without end.
    const max = this.maxQueuedMs / 20;
    while (this.frames.length > max) this.spare.push(this.frames.shift()!);
  }

  /** The next frame, valid until the next call (its array is then reused). */
  next(now = performance.now()): Int16Array | undefined {
    if (this.lent) {
      this.spare.push(this.lent);
      this.lent = undefined;
    }
    if (this.startedAt === undefined || now - this.startedAt < this.delayMs) return undefined;
    return this.lent = this.frames.shift();
  }
}
