// The echo diagnostic (brain URL `echo:`): the caller's own audio comes back after a delay, so
// a page can check its microphone, the network path and playout without any brain.
import { FRAME_SAMPLES_48K } from "../../wasm/opus.ts";
import type { FrameSource } from "./outbound.ts";

export class EchoSource implements FrameSource {
  private frames: Int16Array[] = [];
  private startedAt?: number;

  /** `delayMs` of the caller's audio is held back before playback starts. */
  constructor(private delayMs = 500, private maxQueuedMs = 3000) {}

  /** One decoded 20 ms frame of the caller at 48 kHz (copied: decoders reuse buffers). */
  push(pcm48k: Int16Array, now = performance.now()): void {
    this.startedAt ??= now;
    this.frames.push(pcm48k.slice(0, FRAME_SAMPLES_48K));
    // Bound the queue: a stalled outbound side must not grow memory without end.
    const max = this.maxQueuedMs / 20;
    if (this.frames.length > max) this.frames.splice(0, this.frames.length - max);
  }

  next(now = performance.now()): Int16Array | undefined {
    if (this.startedAt === undefined || now - this.startedAt < this.delayMs) return undefined;
    return this.frames.shift();
  }
}
