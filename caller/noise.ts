// Background noise the simulator mixes under the caller's speech (`--noise brown:-20:6`), at a
// level relative to the speech itself, so a brain can be tried against a noisy line. The speech
// is measured before the noise goes in: the simulator keeps knowing where its words end.
import { rms } from "./wav.ts";

export type NoiseKind = "white" | "pink" | "brown";

export interface NoiseSpec {
  kind: NoiseKind;
  /** The noise's RMS relative to the speech's RMS, in dB (e.g. -20). */
  db: number;
  /** How long the noise goes on after the source audio ends, in ms. */
  tailMs: number;
}

const KINDS: NoiseKind[] = ["white", "pink", "brown"];

/** `KIND[:DB[:TAIL_SECONDS]]`, e.g. `brown:-20:6`; defaults −20 dB and 1 s. */
export function parseNoise(text: string): NoiseSpec {
  const [kind, db = "-20", tail = "1"] = text.split(":");
  if (!KINDS.includes(kind as NoiseKind)) {
    throw new Error(`noise must be ${KINDS.join(", ")} (then :DB[:TAIL_SECONDS]), not "${text}"`);
  }
  const d = Number(db), t = Number(tail);
  if (!Number.isFinite(d) || d > 20) throw new Error(`noise level "${db}" is not a dB figure`);
  if (!Number.isFinite(t) || t < 0 || t > 60) {
    throw new Error(`noise tail "${tail}" must be 0 to 60 seconds`);
  }
  return { kind: kind as NoiseKind, db: d, tailMs: t * 1000 };
}

/** A small deterministic PRNG (LCG) in [-1, 1), so a noisy call replays exactly. */
function uniform(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 31 - 1;
  };
}

/** `n` samples of unit-RMS noise of `kind`. */
export function noise(kind: NoiseKind, n: number, seed = 7): Float64Array {
  const r = uniform(seed);
  const x = new Float64Array(n);
  if (kind === "white") { for (let i = 0; i < n; i++) x[i] = r(); }
  else if (kind === "brown") {
    // Integrated white noise, slightly leaky so it does not wander off to full scale.
    let b = 0;
    for (let i = 0; i < n; i++) x[i] = b = 0.998 * b + 0.05 * r();
  } else {
    // Pink: Paul Kellet's economy filter on white noise.
    let b0 = 0, b1 = 0, b2 = 0;
    for (let i = 0; i < n; i++) {
      const w = r();
      b0 = 0.99765 * b0 + w * 0.099046;
      b1 = 0.963 * b1 + w * 0.2965164;
      b2 = 0.57 * b2 + w * 1.0526913;
      x[i] = b0 + b1 + b2 + w * 0.1848;
    }
  }
  const level = rms(x) || 1;
  for (let i = 0; i < n; i++) x[i] /= level;
  return x;
}

/** The RMS of the speech between `from` and `to` (samples), the reference for the noise level. */
export function speechRms(pcm: Int16Array, from: number, to: number): number {
  return rms(pcm, from, Math.max(from + 1, to));
}

/**
 * `pcm` with noise of `spec` under it and `spec.tailMs` of noise after it; `reference` is the
 * speech's RMS the level is relative to.
 */
export function mixNoise(pcm: Int16Array, spec: NoiseSpec, reference: number): Int16Array {
  const out = new Int16Array(pcm.length + Math.round((spec.tailMs * 48000) / 1000));
  const n = noise(spec.kind, out.length);
  const gain = reference * 10 ** (spec.db / 20);
  for (let i = 0; i < out.length; i++) {
    const v = (i < pcm.length ? pcm[i] : 0) + n[i] * gain;
    out[i] = Math.max(-32768, Math.min(32767, Math.round(v)));
  }
  return out;
}
