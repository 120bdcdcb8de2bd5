// How fast this host runs a fixed piece of the worker's own work right now: Opus-encoding the same
// 20 ms frames (complexity 5, as the bot's voice) in this process. On this shared VM the same
// encoding ran 1.8× slower one hour than the hour before (voice_encoding.ts: 0.229 against
// 0.408 ms a frame) with no steal time to show for it, and call_density's per-call CPU moved with
// it. Benches print this probe beside their figures, so that runs from different hours are read
// against the host they ran on.
import { FRAME_SAMPLES_48K, OpusEncoder } from "../../wasm/opus.ts";

const FRAMES = 50;
const BATCHES = 7;

/**
 * A speech-like test signal of 20 ms 48 kHz frames: two formant-ish tones under a slow amplitude
 * modulation, plus some noise from a fixed seed (the same frames every run).
 */
export function speechLikeFrames(
  frames: number,
  { noise, amplitude }: { noise: number; amplitude: number },
): Int16Array[] {
  const out: Int16Array[] = [];
  let seed = 12345;
  const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32) - 0.5;
  for (let f = 0; f < frames; f++) {
    const frame = new Int16Array(FRAME_SAMPLES_48K);
    for (let i = 0; i < frame.length; i++) {
      const t = (f * FRAME_SAMPLES_48K + i) / 48000;
      const env = 0.5 + 0.5 * Math.sin(2 * Math.PI * 3 * t);
      const v =
        env * (0.4 * Math.sin(2 * Math.PI * 220 * t) + 0.2 * Math.sin(2 * Math.PI * 1250 * t)) +
        noise * rand();
      frame[i] = Math.round(v * amplitude);
    }
    out.push(frame);
  }
  return out;
}

/** Median over a few batches of ms per encoded frame (lower is a faster host). */
export function hostSpeedProbe(): number {
  const frames = speechLikeFrames(FRAMES, { noise: 0.05, amplitude: 26000 });
  const enc = new OpusEncoder({ complexity: 5 });
  const times: number[] = [];
  try {
    // Warm up: WebAssembly starts in its baseline tier and is optimised once hot.
    for (let r = 0; r < 10; r++) for (const f of frames) enc.encode(f);
    for (let b = 0; b < BATCHES; b++) {
      const t0 = performance.now();
      for (const f of frames) enc.encode(f);
      times.push((performance.now() - t0) / FRAMES);
    }
  } finally {
    enc.close();
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(BATCHES / 2)];
}

if (import.meta.main) console.log(`host probe: ${hostSpeedProbe().toFixed(3)} ms per Opus frame`);
