import assert from "node:assert/strict";
import {
  FRAME_SAMPLES_48K,
  OPUS_SILENCE_20MS,
  OpusDecoder,
  OpusEncoder,
  opusPacketSamples48k,
} from "./opus.ts";

const toc = (config: number, code: number) => (config << 3) | code;

Deno.test("a packet of the real encoder reads as 20 ms, and so does the silence constant", () => {
  const enc = new OpusEncoder({ complexity: 5 });
  for (let f = 0; f < 20; f++) {
    const pcm = Int16Array.from(
      { length: FRAME_SAMPLES_48K },
      (_, i) => 8000 * Math.sin(i / (f + 3)),
    );
    assert.equal(opusPacketSamples48k(enc.encode(pcm)), 960);
  }
  assert.equal(opusPacketSamples48k(enc.encode(new Int16Array(960))), 960);
  enc.close();
  assert.equal(opusPacketSamples48k(OPUS_SILENCE_20MS), 960);
});

Deno.test("each TOC config gives its frame duration (RFC 6716 table 2)", () => {
  const ms = (config: number) => opusPacketSamples48k(Uint8Array.of(toc(config, 0)))! / 48;
  // SILK narrow, medium and wide band: 10, 20, 40, 60 ms.
  for (const base of [0, 4, 8]) {
    assert.deepEqual([0, 1, 2, 3].map((i) => ms(base + i)), [10, 20, 40, 60]);
  }
  // Hybrid super-wide and full band: 10, 20 ms.
  assert.deepEqual([12, 13, 14, 15].map(ms), [10, 20, 10, 20]);
  // CELT, every band: 2.5, 5, 10, 20 ms.
  for (const base of [16, 20, 24, 28]) {
    assert.deepEqual([0, 1, 2, 3].map((i) => ms(base + i)), [2.5, 5, 10, 20]);
  }
  // The stereo bit does not change the duration.
  assert.equal(opusPacketSamples48k(Uint8Array.of(toc(1, 0) | 4)), 960);
});

Deno.test("codes 1 and 2 carry two frames, code 3 the count of its second byte", () => {
  assert.equal(opusPacketSamples48k(Uint8Array.of(toc(0, 1))), 960); // 2 x 10 ms SILK
  assert.equal(opusPacketSamples48k(Uint8Array.of(toc(1, 2), 0)), 1920); // 2 x 20 ms
  assert.equal(opusPacketSamples48k(Uint8Array.of(toc(31, 3), 3)), 2880); // 3 x 20 ms CELT
  assert.equal(opusPacketSamples48k(Uint8Array.of(toc(16, 3), 48)), 5760); // 48 x 2.5 ms
  // The VBR and padding flags of the count byte are not part of the count.
  assert.equal(opusPacketSamples48k(Uint8Array.of(toc(16, 3), 0xc0 | 8)), 960);
  assert.equal(opusPacketSamples48k(Uint8Array.of(toc(3, 3), 2)), 5760); // 2 x 60 ms: the most
});

Deno.test("empty and malformed packets have no duration", () => {
  assert.equal(opusPacketSamples48k(new Uint8Array(0)), undefined);
  assert.equal(opusPacketSamples48k(Uint8Array.of(toc(1, 3))), undefined); // no count byte
  assert.equal(opusPacketSamples48k(Uint8Array.of(toc(1, 3), 0)), undefined); // count 0
  assert.equal(opusPacketSamples48k(Uint8Array.of(toc(1, 3), 7)), undefined); // 140 ms
  assert.equal(opusPacketSamples48k(Uint8Array.of(toc(3, 3), 3)), undefined); // 180 ms
  assert.equal(opusPacketSamples48k(Uint8Array.of(toc(31, 3), 63)), undefined);
});

Deno.test("the duration read from the header is what libopus decodes the packet to", () => {
  // Header-only packets are valid Opus (empty frames, decoded as concealment of their length).
  const dec = new OpusDecoder({ sampleRate: 48000 });
  const packets = [
    ...Array.from({ length: 32 }, (_, c) => Uint8Array.of(toc(c, 0))),
    ...Array.from({ length: 32 }, (_, c) => Uint8Array.of(toc(c, 1))),
    ...Array.from({ length: 32 }, (_, c) => Uint8Array.of(toc(c, 2), 0)),
    Uint8Array.of(toc(16, 3), 48),
    Uint8Array.of(toc(2, 3), 3),
  ];
  for (const p of packets) {
    assert.equal(dec.decode(p).length, opusPacketSamples48k(p), `TOC 0x${p[0].toString(16)}`);
  }
  dec.close();
});
