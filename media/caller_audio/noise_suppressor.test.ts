// The noise stage on signals whose noise and speech are known.
import { assert_ as assert, assertEquals } from "../../tests/helpers/assert.ts";
import { NoiseSuppressor } from "./noise_suppressor.ts";
import { concat, mix, whiteNoise } from "../../tests/helpers/test_signals.ts";
import { speech16k } from "../../tests/helpers/test_speech.ts";

const rmsDb = (pcm: Int16Array) => {
  let s = 0;
  for (const v of pcm) s += v * v;
  return 10 * Math.log10(s / Math.max(1, pcm.length) + 1e-9);
};

/** `pcm` through a fresh suppressor in 20 ms frames, as a call pushes it. */
function denoise(pcm: Int16Array): Int16Array {
  const ns = new NoiseSuppressor();
  const parts: Int16Array[] = [];
  for (let o = 0; o < pcm.length; o += 320) parts.push(ns.process(pcm.subarray(o, o + 320)));
  ns.close();
  return concat(...parts);
}

Deno.test("the stage removes most of a stationary noise's energy and keeps the audio's length", () => {
  const noise = whiteNoise(3000, -30);
  const out = denoise(noise);
  // A few ms stay in the filters; the rest comes out.
  assert(noise.length - out.length < 16 * 30, `${noise.length} in, ${out.length} out`);
  // After RNNoise has learnt the noise (the first second), what is left is >= 15 dB down.
  const before = rmsDb(noise.subarray(16000)), after = rmsDb(out.subarray(16000));
  assert(before - after >= 15, `noise ${before.toFixed(1)} dB → ${after.toFixed(1)} dB`);
});

Deno.test("the stage keeps the caller's speech while removing the noise under it", async () => {
  const speech = await speech16k("what is the weather like today");
  const noisy = mix(
    concat(new Int16Array(16000), speech),
    whiteNoise(1000 + speech.length / 16, -35),
  );
  const out = denoise(noisy);
  const speechPart = (pcm: Int16Array) => pcm.subarray(16000, 16000 + speech.length);
  // The speech's energy survives (within 3 dB), the noise alone (first second's end) does not.
  const kept = rmsDb(speechPart(out)) - rmsDb(speech);
  assert(Math.abs(kept) < 3, `speech level changed by ${kept.toFixed(1)} dB`);
  const quiet = rmsDb(out.subarray(8000, 15000)), was = rmsDb(noisy.subarray(8000, 15000));
  assert(was - quiet >= 10, `noise ${was.toFixed(1)} → ${quiet.toFixed(1)} dB`);
});

Deno.test("a closed stage gives nothing back and can be closed twice", () => {
  const ns = new NoiseSuppressor();
  ns.close();
  assertEquals(ns.process(new Int16Array(320)).length, 0);
  ns.close();
});
