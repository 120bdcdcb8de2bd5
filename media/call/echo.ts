// The echo diagnostic (brain URL `echo:`): the caller's own audio comes back after a delay, so
// a page can check its microphone, the network path and playout without any brain.
//
// The caller's 20 ms Opus packets go back out as they came (the RTP sender gives them our SSRC,
// sequence and timestamps): no decoding, no encoding. Only a caller sending other durations
// (10, 40, 60 ms ptime) makes the call decode, and the echo then queues PCM frames instead.
import { FRAME_SAMPLES_48K, opusPacketSamples48k } from "../../wasm/opus.ts";
import type { FrameSource } from "../audio/frame_source.ts";

/**
 * A packet buffer's size: the longest Opus frame (RFC 6716 §3.2.1), well above any 20 ms packet
 * a browser sends (and below the 1920 bytes of a PCM frame). A longer packet gets its own size.
 */
const PACKET_BUFFER_BYTES = 1275;

/** A caller packet's bytes, in a buffer reused from packet to packet. */
interface PacketSlot {
  bytes: Uint8Array;
  length: number;
}

export class EchoSource implements FrameSource {
  private frames: Int16Array[] = [];
  /** Frames handed back by next(), reused by push(): no allocation per frame once warm. */
  private spare: Int16Array[] = [];
  /** The frame next() returned last: the outbound side is done with it by the next call. */
  private lent?: Int16Array;
  private startedAt?: number;
  private packets: PacketSlot[] = [];
  /** Slots handed back by nextPacket(), reused by pushPacket(): no new buffer once warm. */
  private spareSlots: PacketSlot[] = [];
  /** The slot nextPacket() returned last: the sender has copied it by the next call. */
  private lentSlot?: PacketSlot;
  /** False once a packet was not 20 ms: from then on the call decodes for good. */
  private passThrough = true;
  /** Decoded audio short of a whole frame (pushDecoded), made once the call decodes. */
  private partial?: Int16Array;
  private partialLength = 0;

  /** `delayMs` of the caller's audio is held back before playback starts. */
  constructor(private delayMs = 500, private maxQueuedMs = 3000) {}

  /**
   * One caller Opus packet, copied (the peer's buffer is not ours to keep). Returns false when
   * the echo does not keep it: this call now plays decoded audio, and the caller of pushPacket
   * decodes the packet and gives the PCM to pushDecoded(). A packet without a valid header is
   * dropped (true): a decoder would refuse it too.
   */
  pushPacket(payload: Uint8Array, now = performance.now()): boolean {
    if (!this.passThrough) return false;
    const samples = opusPacketSamples48k(payload);
    if (samples === undefined) return true;
    if (samples !== FRAME_SAMPLES_48K) {
      // The outbound side sends one packet per 20 ms tick and stamps 960 samples on each, so
      // other durations cannot pass through. What is queued is dropped (at most maxQueuedMs,
      // once per call) rather than decoded out of order, and the delay starts again with the
      // first decoded frame; decoding stays on so the decoder's state stays continuous.
      this.passThrough = false;
      this.packets = [];
      this.spareSlots = [];
      this.lentSlot = undefined;
      this.startedAt = undefined;
      return false;
    }
    this.startedAt ??= now;
    let slot = this.spareSlots.pop();
    if (!slot || slot.bytes.length < payload.length) {
      slot = { bytes: new Uint8Array(Math.max(PACKET_BUFFER_BYTES, payload.length)), length: 0 };
    }
    slot.bytes.set(payload);
    slot.length = payload.length;
    this.packets.push(slot);
    // Bound the queue: a stalled outbound side must not grow memory without end.
    const max = this.maxQueuedMs / 20;
    while (this.packets.length > max) this.spareSlots.push(this.packets.shift()!);
    return true;
  }

  /**
   * The next caller packet, valid until the next call (its buffer is then reused). Undefined
   * while held back, when the queue is empty, and always once the call decodes (next() then).
   */
  nextPacket(now = performance.now()): Uint8Array | undefined {
    if (this.lentSlot) {
      this.spareSlots.push(this.lentSlot);
      this.lentSlot = undefined;
    }
    if (this.startedAt === undefined || now - this.startedAt < this.delayMs) return undefined;
    const slot = this.lentSlot = this.packets.shift();
    // A view per packet, no copy and no new buffer: the RTP sender copies what it sends.
    return slot?.bytes.subarray(0, slot.length);
  }

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

  /**
   * Decoded caller audio of any duration, cut into 20 ms frames: push() would cut a 40 or 60 ms
   * packet short and pad a 10 ms one with silence.
   */
  pushDecoded(pcm48k: Int16Array, now = performance.now()): void {
    const partial = this.partial ??= new Int16Array(FRAME_SAMPLES_48K);
    for (let i = 0; i < pcm48k.length;) {
      const n = Math.min(pcm48k.length - i, FRAME_SAMPLES_48K - this.partialLength);
      partial.set(pcm48k.subarray(i, i + n), this.partialLength);
      i += n;
      this.partialLength += n;
      if (this.partialLength === FRAME_SAMPLES_48K) {
        this.push(partial, now);
        this.partialLength = 0;
      }
    }
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
