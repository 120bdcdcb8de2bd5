import assert from "node:assert/strict";
import {
  FRAME_SAMPLES_16K,
  FRAME_SAMPLES_48K,
  OPUS_SILENCE_20MS,
  OpusDecoder,
  OpusEncoder,
  OpusError,
} from "./opus.ts";

function toneFrames(freq: number, frames: number, amplitude = 10000): Int16Array[] {
  const out: Int16Array[] = [];
  for (let f = 0; f < frames; f++) {
    const frame = new Int16Array(FRAME_SAMPLES_48K);
    for (let i = 0; i < frame.length; i++) {
      const n = f * FRAME_SAMPLES_48K + i;
      frame[i] = Math.round(amplitude * Math.sin((2 * Math.PI * freq * n) / 48000));
    }
    out.push(frame);
  }
  return out;
}

function rms(x: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i] * x[i];
  return Math.sqrt(s / x.length);
}

/** Goertzel power of one frequency, normalised by length. */
function power(x: ArrayLike<number>, freq: number, rate: number): number {
  const k = 2 * Math.cos((2 * Math.PI * freq) / rate);
  let s1 = 0, s2 = 0;
  for (let i = 0; i < x.length; i++) {
    const s0 = x[i] + k * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  return (s1 * s1 + s2 * s2 - k * s1 * s2) / x.length;
}

function concat(parts: Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((a, p) => a + p.length, 0));
  let o = 0;
  for (const p of parts) (out.set(p, o), o += p.length);
  return out;
}

function roundTrip(freq: number, rate: 16000 | 48000): { input: Int16Array; output: Int16Array } {
  const enc = new OpusEncoder();
  const dec = new OpusDecoder({ sampleRate: rate });
  const frames = toneFrames(freq, 50);
  const decoded = frames.map((f) => dec.decode(enc.encode(f)).slice());
  enc.close();
  dec.close();
  return { input: concat(frames), output: concat(decoded) };
}

Deno.test("a 440 Hz tone keeps its energy and frequency through encode and 48 kHz decode", () => {
  const { input, output } = roundTrip(440, 48000);
  assert.equal(output.length, input.length);
  // Skip the first 100 ms: codec delay and encoder start-up.
  const tail = output.subarray(4800);
  const ratio = rms(tail) / rms(input.subarray(4800));
  assert.ok(ratio > 0.8 && ratio < 1.2, `energy ratio ${ratio}`);
  const at440 = power(tail, 440, 48000);
  assert.ok(at440 > 100 * power(tail, 1000, 48000), "440 Hz dominates 1 kHz");
  assert.ok(at440 > 100 * power(tail, 220, 48000), "440 Hz dominates 220 Hz");
});

Deno.test("decoding at 16 kHz gives 320 samples per 20 ms packet and keeps a 1 kHz tone", () => {
  const enc = new OpusEncoder();
  const dec = new OpusDecoder({ sampleRate: 16000 });
  assert.equal(dec.frameSamples, FRAME_SAMPLES_16K);
  const parts: Int16Array[] = [];
  for (const frame of toneFrames(1000, 50)) {
    const pcm = dec.decode(enc.encode(frame));
    assert.equal(pcm.length, 320);
    parts.push(pcm.slice());
  }
  enc.close();
  dec.close();
  const tail = concat(parts).subarray(1600);
  const ratio = rms(tail) / 7071; // rms of a 10000-amplitude sine
  assert.ok(ratio > 0.8 && ratio < 1.2, `energy ratio ${ratio}`);
  assert.ok(power(tail, 1000, 16000) > 100 * power(tail, 3000, 16000));
});

Deno.test("decode reuses one output buffer for 20 ms frames", () => {
  const enc = new OpusEncoder();
  const dec = new OpusDecoder({ sampleRate: 16000 });
  const [a, b] = toneFrames(300, 2);
  const first = dec.decode(enc.encode(a));
  const second = dec.decode(enc.encode(b));
  assert.equal(first, second);
  assert.equal(first.buffer, second.buffer);
  enc.close();
  dec.close();
});

Deno.test("a malformed packet throws OpusError and the decoder still works after it", () => {
  const enc = new OpusEncoder();
  const dec = new OpusDecoder({ sampleRate: 16000 });
  // TOC code 3 (arbitrary frame count) with a frame count byte of 0 is invalid.
  assert.throws(() => dec.decode(Uint8Array.of(0x03, 0x00)), (e: unknown) => {
    assert.ok(e instanceof OpusError);
    assert.match(e.message, /opus decode failed: .*corrupted/i);
    return true;
  });
  assert.throws(() => dec.decode(new Uint8Array(5000)), OpusError);
  assert.equal(dec.conceal().length, 320);
  assert.equal(dec.decode(new Uint8Array(0)).length, 320, "empty packet is concealed");
  assert.equal(dec.decode(enc.encode(toneFrames(440, 1)[0])).length, 320);
  enc.close();
  dec.close();
});

Deno.test("the silence packet decodes to 20 ms of zeros at both rates", () => {
  for (const rate of [16000, 48000] as const) {
    const dec = new OpusDecoder({ sampleRate: rate });
    const pcm = dec.decode(OPUS_SILENCE_20MS);
    assert.equal(pcm.length, rate / 50);
    assert.ok(pcm.every((s) => s === 0));
    dec.close();
  }
});

Deno.test("encode rejects a frame that is not 960 samples and a closed encoder", () => {
  const enc = new OpusEncoder({ bitrate: 24000, complexity: 5 });
  assert.throws(() => enc.encode(new Int16Array(480)), RangeError);
  const pkt = enc.encode(new Int16Array(960));
  assert.ok(pkt.length > 0 && pkt.length < 40, `first silent packet length ${pkt.length}`);
  enc.close();
  assert.throws(() => enc.encode(new Int16Array(960)), /closed/);
});

/** The bandwidth an Opus packet codes, from its TOC byte (RFC 6716 §3.1, Table 2). */
function tocBandwidth(packet: Uint8Array): string {
  const config = packet[0] >> 3;
  if (config < 12) return ["narrowband", "mediumband", "wideband"][config >> 2];
  if (config < 16) return config < 14 ? "superwideband" : "fullband";
  return ["narrowband", "wideband", "superwideband", "fullband"][(config - 16) >> 2];
}

Deno.test("a wideband cap keeps speech-rate packets at 8 kHz, where the default codes fullband", () => {
  // A rich signal (a 300 Hz pulse train) so the default picks its widest band at 32 kbit/s.
  const frames = toneFrames(300, 25).map((f) => f.map((v, i) => (i % 160 < 8 ? 12000 : v / 4)));
  const bands = (options: ConstructorParameters<typeof OpusEncoder>[0]) => {
    const enc = new OpusEncoder({ complexity: 5, ...options });
    const seen = new Set(frames.slice(5).map((f) => tocBandwidth(enc.encode(f))));
    enc.close();
    return [...seen];
  };
  assert.deepEqual(bands({ maxBandwidth: "wideband" }), ["wideband"]);
  assert.deepEqual(bands({}), ["fullband"]);
});

Deno.test("an encoder at 16 kHz input takes 320-sample frames and decodes back to its tone", () => {
  const enc = new OpusEncoder({ sampleRate: 16000 });
  const dec = new OpusDecoder({ sampleRate: 16000 });
  assert.equal(enc.frameSamples, FRAME_SAMPLES_16K);
  assert.throws(() => enc.encode(new Int16Array(FRAME_SAMPLES_48K)), RangeError);
  const out: Int16Array[] = [];
  for (let f = 0; f < 25; f++) {
    const frame = new Int16Array(FRAME_SAMPLES_16K);
    for (let i = 0; i < frame.length; i++) {
      frame[i] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * (f * 320 + i)) / 16000));
    }
    out.push(dec.decode(enc.encode(frame)).slice());
  }
  const tail = concat(out.slice(5));
  assert.ok(power(tail, 440, 16000) > 100 * power(tail, 1000, 16000));
  enc.close();
  dec.close();
});
