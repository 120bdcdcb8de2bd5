// The caller's receiver (media/rtc/receiver.ts: jitter buffer, Opus decode, FEC recovery,
// concealment) timed alone on a made-up packet stream, so a bench can give its cost per call
// under a network condition. Used by caller_receiver.ts and network.ts.
import { OpusEncoder } from "../../wasm/opus.ts";
import { CallerReceiver } from "../../media/rtc/receiver.ts";
import type { LossyLink } from "../../caller/lossy_link.ts";

export interface CallerPacket {
  seq: number;
  ts: number;
  payload: Uint8Array;
}
export interface Arrival {
  p: CallerPacket;
  /** ms from the stream's start. */
  at: number;
}

/** `frames` 20 ms Opus packets of a voiced, pitch-varying tone, as a caller's would be. */
export function speechLikePackets(frames: number, expectedLossPercent = 10): CallerPacket[] {
  const enc = new OpusEncoder({ expectedLossPercent });
  const packets: CallerPacket[] = [];
  let phase = 0;
  for (let f = 0; f < frames; f++) {
    const f0 = 110 + ((f * 37) % 140);
    const pcm = new Int16Array(960);
    for (let i = 0; i < 960; i++) {
      phase += (2 * Math.PI * f0) / 48000;
      pcm[i] = Math.round(5000 * (Math.sin(phase) + Math.sin(2 * phase) / 2));
    }
    packets.push({ seq: f & 0xffff, ts: f * 960, payload: enc.encode(pcm).slice() });
  }
  enc.close();
  return packets;
}

/** The packets as they reach the worker through `link`'s inbound loss, jitter and reordering. */
export function arrivalsThrough(packets: CallerPacket[], link: LossyLink): Arrival[] {
  const out: Arrival[] = [];
  for (const [i, p] of packets.entries()) {
    if (link.passes(new Uint8Array([128]), "in")) out.push({ p, at: i * 20 + link.delay() });
  }
  return out.sort((a, b) => a.at - b.at);
}

/** Mean ms one CallerReceiver takes over `arrivals` (after a warm-up round). */
export function receiverMs(arrivals: Arrival[], rounds = 10): number {
  const run = () => {
    const r = new CallerReceiver(() => {});
    for (const { p, at } of arrivals) {
      r.push(
        { header: { ssrc: 1, sequenceNumber: p.seq, timestamp: p.ts }, payload: p.payload },
        at,
      );
    }
    r.flush();
    r.close();
  };
  run();
  const t0 = performance.now();
  for (let i = 0; i < rounds; i++) run();
  return (performance.now() - t0) / rounds;
}
