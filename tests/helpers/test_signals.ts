/**
 * Test and bench signals for the VAD: espeak-ng speech at 16 kHz (made at 48 kHz, then decimated
 * here, as the worker's audio is), noise, tones, and where the speech really starts and stops.
 */

import { speechWav } from "./audio.ts";
import { readWav } from "../../caller/wav.ts";

// Windowed-sinc low-pass for 48 kHz -> 16 kHz: cutoff 7 kHz (below the 8 kHz Nyquist), 191 taps
// (Blackman window; stopband above ~8 kHz far below 16-bit noise), unity gain at DC.
const TAPS = (() => {
  const n = 191, mid = (n - 1) / 2, fc = 7000 / 48000;
  const h = new Float64Array(n);
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const x = i - mid;
    const sinc = x === 0 ? 2 * fc : Math.sin(2 * Math.PI * fc * x) / (Math.PI * x);
    const w = 0.42 - 0.5 * Math.cos((2 * Math.PI * i) / (n - 1)) +
      0.08 * Math.cos((4 * Math.PI * i) / (n - 1));
    h[i] = sinc * w;
    sum += h[i];
  }
  return h.map((v) => v / sum);
})();

/** 48 kHz -> 16 kHz: low-pass, keep every third sample. Zero-phase (no delay added). */
export function decimate48to16(pcm: Int16Array): Int16Array {
  const out = new Int16Array(Math.floor(pcm.length / 3));
  const mid = (TAPS.length - 1) / 2;
  for (let o = 0; o < out.length; o++) {
    const c = o * 3;
    let acc = 0;
    for (let t = 0; t < TAPS.length; t++) {
      const i = c + t - mid;
      if (i >= 0 && i < pcm.length) acc += TAPS[t] * pcm[i];
    }
    out[o] = Math.max(-32768, Math.min(32767, Math.round(acc)));
  }
  return out;
}

/** espeak-ng saying `text` at 48 kHz with `padSeconds` of digital silence around it. */
export async function speech48k(text: string, padSeconds = 0.5): Promise<Int16Array> {
  const wav = await readWav(await speechWav(text, padSeconds, 48000));
  if (wav.sampleRate !== 48000) throw new Error(`expected 48 kHz, got ${wav.sampleRate}`);
  return wav.samples;
}

/** The same at 16 kHz, decimated from 48 kHz. */
export async function speech16k(text: string, padSeconds = 0.5): Promise<Int16Array> {
  return decimate48to16(await speech48k(text, padSeconds));
}

/** Where the signal first and last exceeds `level` (absolute sample value), in ms at 16 kHz. */
export function speechBounds(pcm: Int16Array, level = 300): { onsetMs: number; offsetMs: number } {
  let first = -1, last = -1;
  for (let i = 0; i < pcm.length; i++) {
    if (Math.abs(pcm[i]) > level) {
      if (first < 0) first = i;
      last = i;
    }
  }
  if (first < 0) throw new Error("no sample above the level: not speech");
  return { onsetMs: first / 16, offsetMs: (last + 1) / 16 };
}

export function concat(...parts: Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** `ms` of digital silence at 16 kHz. */
export function silence(ms: number): Int16Array {
  return new Int16Array(Math.round(ms * 16));
}

/** Small deterministic PRNG (LCG), uniform in [-1, 1), so noise tests replay exactly. */
function uniform(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 31 - 1;
  };
}

function scaleToRms(x: Float64Array, dbfs: number): Int16Array {
  let sq = 0;
  for (const v of x) sq += v * v;
  const gain = (32768 * 10 ** (dbfs / 20)) / Math.sqrt(sq / x.length);
  return Int16Array.from(x, (v) => Math.max(-32768, Math.min(32767, Math.round(v * gain))));
}

/** White noise at an RMS of `dbfs` (relative to full scale), 16 kHz. */
export function whiteNoise(ms: number, dbfs: number, seed = 1): Int16Array {
  const r = uniform(seed);
  return scaleToRms(Float64Array.from({ length: Math.round(ms * 16) }, r), dbfs);
}

/** Pink (1/f) noise at an RMS of `dbfs`, 16 kHz (Paul Kellet's refined filter on white noise). */
export function pinkNoise(ms: number, dbfs: number, seed = 2): Int16Array {
  const r = uniform(seed);
  let b0 = 0, b1 = 0, b2 = 0, b3 = 0, b4 = 0, b5 = 0, b6 = 0;
  const x = Float64Array.from({ length: Math.round(ms * 16) }, () => {
    const w = r();
    b0 = 0.99886 * b0 + w * 0.0555179;
    b1 = 0.99332 * b1 + w * 0.0750759;
    b2 = 0.969 * b2 + w * 0.153852;
    b3 = 0.8665 * b3 + w * 0.3104856;
    b4 = 0.55 * b4 + w * 0.5329522;
    b5 = -0.7616 * b5 - w * 0.016898;
    const v = b0 + b1 + b2 + b3 + b4 + b5 + b6 + w * 0.5362;
    b6 = w * 0.115926;
    return v;
  });
  return scaleToRms(x, dbfs);
}

/** A sine at `hz` with an RMS of `dbfs`, 16 kHz. */
export function tone(ms: number, hz: number, dbfs: number): Int16Array {
  const x = Float64Array.from(
    { length: Math.round(ms * 16) },
    (_, i) => Math.sin((2 * Math.PI * hz * i) / 16000),
  );
  return scaleToRms(x, dbfs);
}

/** Mixes `b` into `a` (same length or shorter), clipping. */
export function mix(a: Int16Array, b: Int16Array): Int16Array {
  return Int16Array.from(
    a,
    (v, i) => Math.max(-32768, Math.min(32767, v + (i < b.length ? b[i] : 0))),
  );
}
