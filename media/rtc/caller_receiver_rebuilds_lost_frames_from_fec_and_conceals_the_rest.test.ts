// The caller's receiver turns a damaged packet stream into one 16 kHz frame per 20 ms of the
// caller's time: with 10 % of packets lost, some reordered and some duplicated, it gives exactly
// as many frames as were sent, rebuilds lost frames from the next packet's FEC, conceals what it
// cannot rebuild, and sounds closer to the undamaged call than decoding packets as they arrive
// (today's path before the receiver), which shortens and garbles the timeline.
import assert from "node:assert/strict";
import { OpusDecoder, OpusEncoder } from "../../wasm/opus.ts";
import { type CallerPacket, CallerReceiver } from "./receiver.ts";

const FRAMES = 250;

/** A voiced sound whose pitch moves every frame, encoded as a browser would (FEC on). */
function callerPackets(): CallerPacket[] {
  const enc = new OpusEncoder({ expectedLossPercent: 10 });
  const out: CallerPacket[] = [];
  let phase = 0;
  for (let f = 0; f < FRAMES; f++) {
    const f0 = 110 + ((f * 37) % 140);
    const pcm = new Int16Array(960);
    for (let i = 0; i < 960; i++) {
      phase += (2 * Math.PI * f0) / 48000;
      pcm[i] = Math.round(5000 * (Math.sin(phase) + Math.sin(2 * phase) / 2));
    }
    out.push({
      header: { ssrc: 7, sequenceNumber: (65000 + f) & 0xffff, timestamp: (f * 960) >>> 0 },
      payload: enc.encode(pcm).slice(),
    });
  }
  enc.close();
  return out;
}

/** What the network did: every 10th packet lost, every 17th swapped with the next, every 23rd twice. */
function damaged(packets: CallerPacket[]): { packet: CallerPacket; at: number }[] {
  const out: { packet: CallerPacket; at: number }[] = [];
  for (let i = 0; i < packets.length; i++) {
    if (i % 10 === 5) continue;
    if (i % 17 === 3 && i + 1 < packets.length && (i + 1) % 10 !== 5) {
      out.push({ packet: packets[i + 1], at: i * 20 }, { packet: packets[i], at: i * 20 + 5 });
      i++;
      continue;
    }
    out.push({ packet: packets[i], at: i * 20 });
    if (i % 23 === 0) out.push({ packet: packets[i], at: i * 20 + 2 });
  }
  return out;
}

function join(frames: Int16Array[]): Int16Array {
  const out = new Int16Array(frames.reduce((n, f) => n + f.length, 0));
  let o = 0;
  for (const f of frames) (out.set(f, o), o += f.length);
  return out;
}

function snrDb(ref: Int16Array, got: Int16Array): number {
  let sig = 0, err = 0;
  for (let i = 0; i < ref.length; i++) {
    sig += ref[i] ** 2;
    err += (ref[i] - (got[i] ?? 0)) ** 2;
  }
  return 10 * Math.log10(sig / Math.max(err, 1));
}

Deno.test("the caller's receiver keeps one frame per 20 ms, rebuilding lost frames from FEC", () => {
  const packets = callerPackets();
  const reference = new OpusDecoder({ sampleRate: 16000 });
  const clean = join(packets.map((p) => reference.decode(p.payload).slice()));
  reference.close();

  const frames: Int16Array[] = [];
  const receiver = new CallerReceiver((pcm) => frames.push(pcm.slice()));
  for (const { packet, at } of damaged(packets)) receiver.push(packet, at);
  receiver.flush();
  const stats = receiver.stats;
  receiver.close();
  assert.equal(frames.length, FRAMES, "one frame per 20 ms of the caller's time");
  assert.ok(frames.every((f) => f.length === 320));
  const about = JSON.stringify(stats);
  // Only the first swap comes late: it deepens the buffer, which then puts the others right.
  assert.equal(stats.late, 1, about);
  assert.equal(stats.lost, 25 + stats.late, about);
  assert.equal(stats.recovered + stats.concealed, stats.lost, about);
  assert.ok(stats.recovered >= 25, `lost frames whose next packet came use its FEC: ${about}`);
  assert.ok(stats.duplicates >= 8, about);

  // Today's path: each packet decoded as it arrives, duplicates and all, nothing for the lost.
  const naive = new OpusDecoder({ sampleRate: 16000 });
  const arrived = join(damaged(packets).map(({ packet }) => naive.decode(packet.payload).slice()));
  naive.close();
  const received = snrDb(clean, join(frames));
  const asArrived = snrDb(clean, arrived);
  console.log(
    `SNR against the undamaged call: receiver ${received.toFixed(1)} dB, as arrived ${
      asArrived.toFixed(1)
    } dB`,
  );
  assert.ok(received > asArrived + 6, `${received.toFixed(1)} vs ${asArrived.toFixed(1)} dB`);
});

Deno.test("a corrupt packet is concealed in its place and a new caller stream starts cleanly", () => {
  const packets = callerPackets().slice(0, 10);
  const frames: Int16Array[] = [];
  const receiver = new CallerReceiver((pcm) => frames.push(pcm.slice()));
  packets.forEach((p, i) =>
    receiver.push(i === 4 ? { ...p, payload: Uint8Array.of(0xff, 0xff) } : p, i * 20)
  );
  assert.equal(frames.length, 10);
  assert.equal(receiver.stats.concealed, 1);
  // The caller's new peer connection: another SSRC, numbers from elsewhere.
  for (let i = 0; i < 5; i++) {
    const p = packets[i];
    receiver.push(
      { header: { ...p.header, ssrc: 8, sequenceNumber: 10 + i }, payload: p.payload },
      300 + i * 20,
    );
  }
  receiver.flush();
  assert.equal(frames.length, 15);
  assert.equal(receiver.stats.received, 15);
  receiver.close();
});
