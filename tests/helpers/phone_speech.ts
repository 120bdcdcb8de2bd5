// Test and bench audio as a phone call's caller sends it: festival at 8 kHz (sox resamples from
// the voice's 16 kHz), G.711 μ-law in 20 ms packets, then the worker's own phone edge
// (media/phone/edge_audio.ts CallerEdge) decodes and upsamples it to 16 kHz caller frames.
import { callerSpeechWav } from "./audio.ts";
import { readWav } from "../../caller/wav.ts";
import { g711Encode } from "../../media/phone/g711.ts";
import { CallerEdge, LINE_FRAME } from "../../media/phone/edge_audio.ts";

/**
 * A line's noise floor: triangular noise of one μ-law step at the bottom of the scale (±8 in
 * 16-bit), from a fixed seed so a derivation is exact from run to run. Without it the pauses are
 * digital silence (μ-law 0xff), as SIPp and tests/helpers/phone_caller.ts send.
 */
export function lineNoise(pcm: Int16Array, seed: number): Int16Array {
  const out = pcm.slice();
  let s = seed >>> 0;
  const uniform = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  for (let i = 0; i < out.length; i++) {
    out[i] = Math.max(-32768, Math.min(32767, out[i] + Math.round(8 * (uniform() - uniform()))));
  }
  return out;
}

/** 8 kHz PCM through μ-law and the worker's caller edge: 16 kHz, as a phone call hears it. */
export function throughPhone(pcm8k: Int16Array): Int16Array {
  const packets = Math.ceil(pcm8k.length / LINE_FRAME);
  const out = new Int16Array(packets * LINE_FRAME * 2);
  let at = 0;
  const edge = new CallerEdge("PCMU", (frame) => {
    out.set(frame, at);
    at += frame.length;
  });
  const packet = new Int16Array(LINE_FRAME);
  for (let p = 0; p < packets; p++) {
    packet.fill(0);
    packet.set(pcm8k.subarray(p * LINE_FRAME, (p + 1) * LINE_FRAME));
    edge.pushPayload(g711Encode("PCMU", packet));
  }
  edge.close();
  return out;
}

/** `text` spoken by festival over a phone line; `noiseSeed` gives the line a noise floor. */
export async function speechThroughPhone(text: string, noiseSeed?: number): Promise<Int16Array> {
  const pcm8k = (await readWav(await callerSpeechWav(text, 0.3, 8000))).samples;
  return throughPhone(noiseSeed === undefined ? pcm8k : lineNoise(pcm8k, noiseSeed));
}
