import assert from "node:assert/strict";
import { FRAME_SAMPLES_48K, OpusDecoder, OpusEncoder } from "../../wasm/opus.ts";
import { EchoSource } from "./echo.ts";

/** 20 ms Opus packets of a tone from the real encoder, each its own copy. */
function speechPackets(count: number): Uint8Array[] {
  const enc = new OpusEncoder({ complexity: 5 });
  const out: Uint8Array[] = [];
  for (let f = 0; f < count; f++) {
    const pcm = Int16Array.from(
      { length: FRAME_SAMPLES_48K },
      (_, i) => 9000 * Math.sin((2 * Math.PI * (300 + 10 * f) * (f * 960 + i)) / 48000),
    );
    out.push(enc.encode(pcm).slice());
  }
  enc.close();
  return out;
}

/** Two 20 ms packets of one config as one 40 ms code 2 packet (RFC 6716 §3.2.4). */
function fortyMs(a: Uint8Array, b: Uint8Array): Uint8Array {
  assert.equal(a[0], b[0], "both frames share the TOC config");
  assert.ok(a.length - 1 < 252, "a one-byte frame length");
  return Uint8Array.of((a[0] & ~3) | 2, a.length - 1, ...a.subarray(1), ...b.subarray(1));
}

Deno.test("the echo gives back the caller's packets byte for byte, in order, after the delay", () => {
  const echo = new EchoSource(100, 3000);
  const packets = speechPackets(40);
  const peerBuffer = new Uint8Array(1500); // the peer reuses its buffer: the echo must copy
  const got: Uint8Array[] = [];
  for (let t = 0; t < packets.length; t++) {
    peerBuffer.set(packets[t]);
    assert.equal(echo.pushPacket(peerBuffer.subarray(0, packets[t].length), t * 20), true);
    peerBuffer.fill(0);
    const out = echo.nextPacket(t * 20);
    if (out) got.push(out.slice());
    assert.equal(echo.next(t * 20), undefined, "no PCM while packets pass through");
  }
  // Playback starts once 100 ms have passed since the first packet: packet 0 comes out at t = 5.
  assert.deepEqual(got, packets.slice(0, 35));
});

Deno.test("in the steady state the echo reuses its packet buffers instead of allocating", () => {
  const echo = new EchoSource(0, 3000);
  const packets = speechPackets(50);
  const buffers = new Set<ArrayBufferLike>();
  for (let t = 0; t < 500; t++) {
    const p = packets[t % packets.length];
    echo.pushPacket(p, t * 20);
    const out = echo.nextPacket(t * 20)!;
    assert.deepEqual(out, p);
    buffers.add(out.buffer);
  }
  // One packet in the queue and one lent to the sender at a time.
  assert.ok(buffers.size <= 3, `${buffers.size} distinct buffers for 500 packets`);
});

Deno.test("a stalled reader keeps only maxQueuedMs of packets, the latest", () => {
  const echo = new EchoSource(0, 100); // at most 5 packets queued
  const packets = speechPackets(20);
  for (const p of packets) echo.pushPacket(p, 20);
  const out: Uint8Array[] = [];
  for (let p; (p = echo.nextPacket(40));) out.push(p.slice());
  assert.deepEqual(out, packets.slice(15));
});

Deno.test("a packet without a valid header is dropped and the echo goes on passing through", () => {
  const echo = new EchoSource(0, 3000);
  const [p] = speechPackets(1);
  assert.equal(echo.pushPacket(new Uint8Array(0), 0), true);
  assert.equal(echo.pushPacket(Uint8Array.of(0xfb), 0), true); // code 3 without its count
  assert.equal(echo.pushPacket(p, 0), true);
  assert.deepEqual(echo.nextPacket(0), p);
  assert.equal(echo.nextPacket(0), undefined);
});

Deno.test("a 40 ms packet switches the call to decoded frames, which come out through next()", () => {
  const echo = new EchoSource(100, 3000);
  const packets = speechPackets(12);
  const decoder = new OpusDecoder({ sampleRate: 48000 });
  const reference = new OpusDecoder({ sampleRate: 48000 });
  // What Call.onCallerAudio does: the echo keeps the packet, or the call decodes it.
  const fromCaller = (packet: Uint8Array, now: number) => {
    if (!echo.pushPacket(packet, now)) echo.pushDecoded(decoder.decode(packet), now);
  };
  // 20 ms packets queue up, held back by the delay...
  fromCaller(packets[0], 0);
  fromCaller(packets[1], 20);
  // ...until the caller sends 40 ms: the queue is dropped and the delay starts again.
  const long = [fortyMs(packets[2], packets[3]), fortyMs(packets[4], packets[5])];
  assert.equal(echo.pushPacket(long[0], 40), false);
  fromCaller(long[0], 40);
  fromCaller(long[1], 80);
  // Decoded for good, even when 20 ms packets come back.
  assert.equal(echo.pushPacket(packets[6], 120), false);
  fromCaller(packets[6], 120);

  const expected = [
    ...[long[0], long[1], packets[6]].flatMap((p) => {
      const pcm = reference.decode(p).slice();
      return Array.from(
        { length: pcm.length / 960 },
        (_, i) => pcm.subarray(i * 960, i * 960 + 960),
      );
    }),
  ];
  assert.equal(expected.length, 5, "two frames per 40 ms packet, one for the 20 ms one");
  assert.equal(echo.nextPacket(1000), undefined);
  assert.equal(echo.next(139), undefined, "held back 100 ms from the first decoded frame");
  const got: Int16Array[] = [];
  for (let f; (f = echo.next(140));) got.push(f.slice());
  assert.deepEqual(got, expected);
  assert.ok(got.every((f) => f.some((s) => s !== 0)), "speech, not silence");
  decoder.close();
  reference.close();
});

Deno.test("decoded audio of 10 or 60 ms is cut into whole 20 ms frames, nothing lost or padded", () => {
  const echo = new EchoSource(0, 3000);
  const ramp = Int16Array.from({ length: 480 * 3 + 2880 }, (_, i) => i);
  // Three 10 ms packets, then one of 60 ms: 90 ms, four whole frames and 10 ms waiting.
  for (let i = 0; i < 3; i++) echo.pushDecoded(ramp.subarray(i * 480, i * 480 + 480), 0);
  echo.pushDecoded(ramp.subarray(1440), 0);
  const got: Int16Array[] = [];
  for (let f; (f = echo.next(0));) got.push(f.slice());
  assert.deepEqual(got, [0, 1, 2, 3].map((i) => ramp.slice(i * 960, i * 960 + 960)));
});
