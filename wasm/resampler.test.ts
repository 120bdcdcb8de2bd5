import assert from "node:assert/strict";
import { resample, Resampler } from "./resampler.ts";

function sine(frames: number, hz: number, rate: number, amp = 10000): Int16Array {
  return Int16Array.from(
    { length: frames },
    (_, i) => Math.round(amp * Math.sin(2 * Math.PI * hz * i / rate)),
  );
}

/** Upward zero crossings per second, over the middle of the signal (edges skipped). */
function crossingsPerSecond(x: Int16Array, rate: number): number {
  const from = Math.floor(x.length * 0.1), to = Math.floor(x.length * 0.9);
  let n = 0;
  for (let i = from + 1; i < to; i++) if (x[i - 1] < 0 && x[i] >= 0) n++;
  return n / ((to - from) / rate);
}

function concat(parts: Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((s, p) => s + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

Deno.test("22.05 to 48 kHz in espeak-sized pieces gives round(N*48000/22050) samples", () => {
  const r = new Resampler(22050, 48000);
  const input = sine(22050 * 2 + 123, 440, 22050);
  const parts: Int16Array[] = [];
  for (let i = 0; i < input.length; i += 2206) parts.push(r.process(input.subarray(i, i + 2206)));
  parts.push(r.flush());
  r.close();
  assert.equal(concat(parts).length, Math.round(input.length * 48000 / 22050));
});

Deno.test("a 440 Hz sine is still 440 Hz after 22.05 to 48 kHz", () => {
  const out = resample(sine(22050, 440, 22050), 22050, 48000);
  assert.equal(out.length, 48000);
  const hz = crossingsPerSecond(out, 48000);
  assert.ok(Math.abs(hz - 440) <= 2, `measured ${hz} Hz`);
});

Deno.test("resampled output is aligned with the input: no leading filter delay", () => {
  // The best cross-correlation lag against an ideal 48 kHz sine is 0 samples.
  const out = resample(sine(22050, 300, 22050), 22050, 48000);
  const ideal = sine(48000, 300, 48000);
  let bestLag = NaN, best = -Infinity;
  for (let lag = -20; lag <= 20; lag++) {
    let s = 0;
    for (let i = 1000; i < 47000; i++) s += out[i] * ideal[i + lag];
    if (s > best) [best, bestLag] = [s, lag];
  }
  assert.equal(bestLag, 0);
});

Deno.test("48 to 16 kHz keeps a 1 kHz tone and removes a 10 kHz one above the new Nyquist", () => {
  const tone = resample(sine(48000, 1000, 48000), 48000, 16000);
  assert.equal(tone.length, 16000);
  assert.ok(Math.abs(crossingsPerSecond(tone, 16000) - 1000) <= 3);
  const high = resample(sine(48000, 10000, 48000), 48000, 16000);
  const rms = (x: Int16Array) => Math.sqrt(x.reduce((s, v) => s + v * v, 0) / x.length);
  assert.ok(rms(high.subarray(1000, 15000)) < 0.05 * rms(tone.subarray(1000, 15000)));
});

Deno.test("after flush the same resampler starts a fresh, equally long stream", () => {
  const r = new Resampler(22050, 48000, { quality: 3 });
  const input = sine(4410, 500, 22050);
  const a = concat([r.process(input), r.flush()]);
  const b = concat([r.process(input), r.flush()]);
  r.close();
  assert.deepEqual(b, a);
});

Deno.test("stereo input is resampled per channel", () => {
  const left = sine(22050, 440, 22050), right = sine(22050, 880, 22050);
  const inter = new Int16Array(44100);
  for (let i = 0; i < 22050; i++) [inter[2 * i], inter[2 * i + 1]] = [left[i], right[i]];
  const out = resample(inter, 22050, 48000, { channels: 2 });
  assert.equal(out.length, 96000);
  const l = out.filter((_, i) => i % 2 === 0), rr = out.filter((_, i) => i % 2 === 1);
  assert.ok(Math.abs(crossingsPerSecond(l, 48000) - 440) <= 2);
  assert.ok(Math.abs(crossingsPerSecond(rr, 48000) - 880) <= 2);
});

Deno.test("bad settings and use after close are refused", () => {
  assert.throws(() => new Resampler(0, 48000), RangeError);
  assert.throws(() => new Resampler(22050, 48000, { quality: 11 }), RangeError);
  const stereo = new Resampler(22050, 48000, { channels: 2 });
  assert.throws(() => stereo.process(new Int16Array(3)), /multiple of 2/);
  stereo.close();
  const r = new Resampler(22050, 48000);
  r.close();
  r.close();
  assert.throws(() => r.process(new Int16Array(10)), /closed/);
});
