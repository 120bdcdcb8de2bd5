// DTMF as a handset sends it in the audio (ITU-T Q.23 frequency pairs), for tests and the bench:
// 8 kHz PCM at a level in dBm0 per tone, with twist and frequency deviation when a case needs
// them, then through μ-law and the worker's phone edge (phone_speech.ts throughPhone) to the
// 16 kHz frames a call hears.
import { HIGH, KEYPAD, LOW } from "../../media/phone/dtmf_tones.ts";

/** A sine of 0 dBm0 in 16-bit G.711 PCM (3.17 dBm0 is full scale). */
const DBM0_AMPLITUDE = 32767 / 10 ** (3.17 / 20);

export interface ToneOptions {
  /** Each tone's level; the high tone is `twistDb` louder (negative: quieter). */
  dbm0?: number;
  twistDb?: number;
  /** Both frequencies off by this fraction (0.02: 2% high). */
  deviation?: number;
}

/** The pair of frequencies `key` is sent as. */
export function pairOf(key: string): [number, number] {
  const row = KEYPAD.findIndex((r) => r.includes(key));
  if (row < 0) throw new Error(`not a DTMF key: ${key}`);
  return [LOW[row], HIGH[KEYPAD[row].indexOf(key)]];
}

/** `ms` of `key`'s tone pair at 8 kHz. */
export function dtmfTone(key: string, ms: number, o: ToneOptions = {}): Int16Array {
  const [lo, hi] = pairOf(key).map((f) => f * (1 + (o.deviation ?? 0)));
  const a = DBM0_AMPLITUDE * 10 ** ((o.dbm0 ?? -10) / 20);
  const b = a * 10 ** ((o.twistDb ?? 0) / 20);
  const out = new Int16Array(Math.round(ms * 8));
  for (let i = 0; i < out.length; i++) {
    const t = i / 8000;
    const v = a * Math.sin(2 * Math.PI * lo * t) + b * Math.sin(2 * Math.PI * hi * t);
    out[i] = Math.max(-32768, Math.min(32767, Math.round(v)));
  }
  return out;
}

/** Keys as tones of `toneMs` each with `pauseMs` of silence after, at 8 kHz. */
export function dialTones(
  keys: string,
  toneMs = 80,
  pauseMs = 80,
  o: ToneOptions = {},
): Int16Array {
  const parts = [...keys].flatMap((k) => [dtmfTone(k, toneMs, o), new Int16Array(pauseMs * 8)]);
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) out.set(p, at), (at += p.length);
  return out;
}

/** White noise at `dbm0` (RMS), from a fixed seed, added to `pcm` (a copy). */
export function withNoise(pcm: Int16Array, dbm0: number, seed = 1): Int16Array {
  const rms = DBM0_AMPLITUDE / Math.SQRT2 * 10 ** (dbm0 / 20);
  let s = seed >>> 0;
  const uniform = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  const out = pcm.slice();
  for (let i = 0; i < out.length; i++) {
    // Sum of 3 uniforms: near-Gaussian, variance 3/12 per unit.
    const g = (uniform() + uniform() + uniform() - 1.5) * 2;
    out[i] = Math.max(-32768, Math.min(32767, Math.round(out[i] + g * rms)));
  }
  return out;
}
