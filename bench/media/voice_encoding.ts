// What encoding the bot's voice costs, and what each setting keeps of it.
// Run: deno run -A bench/media/voice_encoding.ts [rounds]
//
// The signal is what a call sends: espeak-ng sentences in both personas' English voices, resampled
// to 48 kHz as the synthesis thread does. Each setting encodes it in 20 ms frames with one encoder
// (rounds interleaved, so machine noise falls on every setting alike), and its packets are
// decoded at 48 kHz to judge them:
// - ms per frame: the encoder's time alone (what the media thread spends per speaking frame);
// - kbit/s: the packets' size;
// - LSD 0-8 kHz / 0-11 kHz: log-spectral distance (dB, RMS over bins, mean over voiced 20 ms
//   frames) between source and decoded, over the band the recogniser and a phone keep and over
//   all of espeak's band. Lower is closer; it is a proxy, not a listening test;
// - energy above 8 kHz: the share of the source's energy a wideband cap leaves out.

import { concat } from "../../tests/helpers/test_signals.ts";
import { resample } from "../../wasm/resampler.ts";
import { Espeak } from "../../wasm/espeak.ts";
import { OpusDecoder, OpusEncoder, type OpusEncoderOptions } from "../../wasm/opus.ts";

const ROUNDS = Number(Deno.args[0] ?? 5);
const FRAME = 960;
const SENTENCES = [
  "Thanks for calling. Your order shipped on Tuesday and should arrive by Friday afternoon.",
  "I can move your appointment to next Thursday at half past three, if that suits you.",
  "Sure, let me check that for you. The balance on your account is forty two dollars.",
];
const VOICES = ["en-us+f3", "en-us+m3"];

interface Setting {
  name: string;
  options: OpusEncoderOptions;
}
const SETTINGS: Setting[] = [
  { name: "complexity 5, fullband (kept)", options: { complexity: 5 } },
  {
    name: "complexity 5, superwideband cap",
    options: { complexity: 5, maxBandwidth: "superwideband" },
  },
  { name: "complexity 5, wideband cap", options: { complexity: 5, maxBandwidth: "wideband" } },
  { name: "complexity 9, wideband cap", options: { complexity: 9, maxBandwidth: "wideband" } },
  { name: "complexity 3, fullband", options: { complexity: 3 } },
  { name: "complexity 5, 24 kHz input", options: { complexity: 5, sampleRate: 24000 } },
  { name: "complexity 5, 16 kHz input", options: { complexity: 5, sampleRate: 16000 } },
];

async function speech(): Promise<Map<number, Int16Array>> {
  const espeak = await Espeak.load();
  const raw: Int16Array[] = [];
  for (const voice of VOICES) {
    espeak.setVoice(voice);
    for (const s of SENTENCES) {
      const chunks: Int16Array[] = [];
      espeak.synthesize(s, (pcm) => void chunks.push(pcm.slice()));
      raw.push(concat(...chunks));
    }
  }
  // Each sentence padded to whole 48 kHz frames, so frame f is the same 20 ms at every rate.
  const out = new Map<number, Int16Array>();
  for (const rate of [16000, 24000, 48000]) {
    const frame = rate / 50;
    const parts = raw.map((pcm) => resample(pcm, espeak.sampleRate, rate));
    const frames = parts.map((p) => Math.ceil(p.length / frame) + 1);
    const all = new Int16Array(frames.reduce((a, n) => a + n, 0) * frame);
    let o = 0;
    parts.forEach((p, i) => {
      all.set(p, o);
      o += frames[i] * frame;
    });
    out.set(rate, all);
  }
  return out;
}

// 50 Hz bins of a 20 ms frame at 48 kHz, up to espeak's 11,025 Hz: bin k is k × 50 Hz.
const BINS = 220;
const BINS_8K = 160;
const COS = new Float64Array(BINS * FRAME), SIN = new Float64Array(BINS * FRAME);
const HANN = new Float64Array(FRAME);
for (let i = 0; i < FRAME; i++) HANN[i] = 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / FRAME);
for (let k = 0; k < BINS; k++) {
  for (let i = 0; i < FRAME; i++) {
    COS[k * FRAME + i] = Math.cos((2 * Math.PI * (k + 1) * i) / FRAME) * HANN[i];
    SIN[k * FRAME + i] = Math.sin((2 * Math.PI * (k + 1) * i) / FRAME) * HANN[i];
  }
}

/** Power spectrum of one 20 ms frame (Hann window, DFT over bins 50 Hz to 11 kHz). */
function spectrum(x: Int16Array, start: number): Float64Array {
  const out = new Float64Array(BINS);
  for (let k = 0; k < BINS; k++) {
    let re = 0, im = 0;
    const o = k * FRAME;
    for (let i = 0; i < FRAME; i++) {
      re += x[start + i] * COS[o + i];
      im += x[start + i] * SIN[o + i];
    }
    out[k] = re * re + im * im;
  }
  return out;
}

function lsd(a: Float64Array, b: Float64Array, bins: number): number {
  let s = 0;
  for (let k = 0; k < bins; k++) {
    const d = 10 * Math.log10((a[k] + 1e3) / (b[k] + 1e3));
    s += d * d;
  }
  return Math.sqrt(s / bins);
}

function main(byRate: Map<number, Int16Array>) {
  const src = byRate.get(48000)!;
  const frames = src.length / FRAME;
  const encoders = SETTINGS.map((s) => new OpusEncoder(s.options));
  const decoders = SETTINGS.map(() => new OpusDecoder({ sampleRate: 48000 }));
  const time = SETTINGS.map(() => 0);
  let bytes = SETTINGS.map(() => 0);
  const decoded = SETTINGS.map(() => new Int16Array(src.length));
  for (let r = 0; r < ROUNDS; r++) {
    bytes = SETTINGS.map(() => 0);
    for (let f = 0; f < frames; f++) {
      for (let s = 0; s < SETTINGS.length; s++) {
        const n = encoders[s].frameSamples;
        const frame = byRate.get(encoders[s].sampleRate)!.subarray(f * n, (f + 1) * n);
        const t0 = performance.now();
        const pkt = encoders[s].encode(frame);
        time[s] += performance.now() - t0;
        bytes[s] += pkt.length;
        if (r === ROUNDS - 1) decoded[s].set(decoders[s].decode(pkt), f * FRAME);
      }
    }
  }
  return { frames, time, bytes, decoded };
}

const byRate = await speech();
const src = byRate.get(48000)!;
const { frames, time, bytes, decoded } = main(byRate);

function delayOf(out: Int16Array): number {
  let best = 0, bestLag = 0;
  for (let lag = 0; lag < 960; lag++) {
    let s = 0;
    for (let i = 0; i < 48000 * 2; i += 3) s += src[i] * out[i + lag];
    if (s > best) [best, bestLag] = [s, lag];
  }
  return bestLag;
}

// Energy share above 8 kHz (what a wideband cap leaves out) and the voiced frames to judge.
let hi = 0, all = 0;
const voiced: number[] = [];
const spectra = [];
for (let f = 0; f + 1 < frames; f++) spectra.push(spectrum(src, f * FRAME));
const energy = spectra.map((sp) => sp.reduce((a, v) => a + v, 0));
const loudest = Math.max(...energy);
for (let f = 0; f < spectra.length; f++) {
  const sp = spectra[f], e = energy[f];
  if (e < loudest * 1e-4) continue; // silence and the quietest tails (40 dB below the loudest)
  voiced.push(f);
  all += e;
  hi += sp.slice(BINS_8K).reduce((a, v) => a + v, 0);
}

console.log(
  `bot's voice: ${frames} frames of espeak-ng speech (${VOICES.join(", ")}), ${ROUNDS} rounds, ` +
    `${voiced.length} voiced frames judged; energy above 8 kHz: ${(100 * hi / all).toFixed(2)} %`,
);
console.log(
  "| setting | ms per frame | × kept | kbit/s | LSD 0-8 kHz dB | LSD 0-11 kHz dB |",
);
console.log("|---|---|---|---|---|---|");
for (let s = 0; s < SETTINGS.length; s++) {
  const lag = delayOf(decoded[s]);
  let l8 = 0, l11 = 0;
  for (const f of voiced) {
    const a = spectra[f];
    const b = spectrum(decoded[s], f * FRAME + lag);
    l8 += lsd(a, b, BINS_8K);
    l11 += lsd(a, b, a.length);
  }
  const ms = time[s] / (frames * ROUNDS);
  console.log(
    `| ${SETTINGS[s].name} | ${ms.toFixed(3)} | ${(time[s] / time[0]).toFixed(2)} | ${
      ((bytes[s] * 8) / (frames * 0.02) / 1000).toFixed(1)
    } | ${(l8 / voiced.length).toFixed(2)} | ${(l11 / voiced.length).toFixed(2)} |`,
  );
}
