import assert from "node:assert/strict";
import { createRequire } from "node:module";
import * as ort from "onnxruntime-node";
import {
  loadSileroModel,
  SILERO_FRAME_SAMPLES,
  sileroModel,
  sileroModelPath,
  type SileroStream,
} from "./silero.ts";
import { concat, silence, speech16k } from "../../tests/helpers/test_signals.ts";

/** 16 kHz PCM cut into whole 512-sample frames in -1..1. */
function frames(pcm: Int16Array): Float32Array[] {
  const out: Float32Array[] = [];
  for (let i = 0; i + SILERO_FRAME_SAMPLES <= pcm.length; i += SILERO_FRAME_SAMPLES) {
    out.push(Float32Array.from(pcm.subarray(i, i + SILERO_FRAME_SAMPLES), (v) => v / 32768));
  }
  return out;
}

async function probabilities(stream: SileroStream, input: Float32Array[]): Promise<number[]> {
  const out: number[] = [];
  for (const f of input) out.push(await stream.probability(f));
  return out;
}

const speech = async () =>
  frames(concat(await speech16k("What time does the store open on Sunday?", 0.3), silence(500)));

Deno.test("the model is loaded once per process and found in @ricky0123/vad-web", async () => {
  const [a, b] = await Promise.all([sileroModel(), sileroModel()]);
  assert.equal(a, b);
  assert.equal(a, await sileroModel());
  assert.match(a.path, /@ricky0123[/+]vad-web.*\/dist\/silero_vad_v5\.onnx$/);
  assert.equal(a.path, sileroModelPath());
});

Deno.test("probabilities equal @ricky0123/vad-web's own v5 wrapper (64-sample context)", async () => {
  // vad-web's Silero class (dist/models/silero.js) is the reference for how v5 is framed.
  const require = createRequire(import.meta.url);
  const { Silero } = require(sileroModelPath().replace(/silero_vad_v5\.onnx$/, "models/silero.js"));
  const reference = await Silero.new(ort, () => Deno.readFile(sileroModelPath()));
  const input = await speech();
  const ours = await probabilities((await sileroModel()).stream(), input);
  const theirs: number[] = [];
  for (const f of input) theirs.push((await reference.process(f)).isSpeech);
  assert.deepEqual(ours, theirs);
  await reference.release();
});

Deno.test("speech frames score high and digital silence low", async () => {
  const p = await probabilities((await sileroModel()).stream(), await speech());
  const high = p.filter((v) => v > 0.9).length;
  assert(high >= 40, `only ${high} frames above 0.9`);
  assert(p.slice(0, 8).every((v) => v < 0.1), `leading silence: ${p.slice(0, 8)}`);
  assert(p.slice(-8).every((v) => v < 0.1), `trailing silence: ${p.slice(-8)}`);
});

Deno.test("reset() returns a stream to the state of a fresh one", async () => {
  const model = await sileroModel();
  const input = await speech();
  const fresh = await probabilities(model.stream(), input);
  const reused = model.stream();
  await probabilities(reused, input.slice(20, 40));
  const carried = await probabilities(reused, input);
  assert.notDeepEqual(carried, fresh, "state should carry over without reset");
  reused.reset();
  assert.deepEqual(await probabilities(reused, input), fresh);
});

Deno.test("streams of one model keep their own state when interleaved", async () => {
  const model = await sileroModel();
  const input = await speech();
  const quiet = frames(silence(input.length * 32));
  const aloneSpeech = await probabilities(model.stream(), input);
  const aloneQuiet = await probabilities(model.stream(), quiet);
  const s1 = model.stream(), s2 = model.stream();
  const p1: number[] = [], p2: number[] = [];
  for (let i = 0; i < input.length; i++) {
    const [a, b] = await Promise.all([s1.probability(input[i]), s2.probability(quiet[i])]);
    p1.push(a);
    p2.push(b);
  }
  assert.deepEqual(p1, aloneSpeech);
  assert.deepEqual(p2, aloneQuiet);
});

Deno.test("a stream refuses a wrong frame size and a second frame while one is in flight", async () => {
  const stream = (await sileroModel()).stream();
  await assert.rejects(stream.probability(new Float32Array(320)), RangeError);
  const first = stream.probability(new Float32Array(512));
  await assert.rejects(stream.probability(new Float32Array(512)), /in flight/);
  assert.equal(typeof await first, "number");
});

Deno.test("a model file without v5's inputs (the legacy v4 one) is refused", async () => {
  const legacy = sileroModelPath().replace(/silero_vad_v5\.onnx$/, "silero_vad_legacy.onnx");
  await assert.rejects(loadSileroModel(legacy), /not a Silero v5 model/);
});
