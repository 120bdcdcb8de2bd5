import assert from "node:assert/strict";
import { PocketsphinxEngine } from "./pocketsphinx.ts";
import { SCRIPTS, speech16k } from "../../tests/helpers/test_speech.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ps_init holds a recognition thread for 0.3-0.6 s; made while a caller speaks, it would hold
// that caller's audio and delay the final text.
Deno.test("a spare taken by a speaker is not re-made while a caller of the thread speaks", async () => {
  await using engine = await PocketsphinxEngine.create({ threads: 1, spareDecoders: 1 });
  const pcm = await speech16k(SCRIPTS[0]);
  const a = await engine.open("LANGUAGE_EN");
  const before = await engine.stats();
  assert.deepEqual([before.decodersMade, before.idleDecoders], [1, 1]);
  let at = 0;
  const speak = (samples: number) => {
    a.push(pcm.subarray(at, at + samples));
    at += samples;
  };
  speak(3200); // takes the spare
  for (let i = 0; i < 8; i++) {
    await sleep(50);
    speak(800);
  }
  const during = await engine.stats();
  assert.deepEqual([during.decodersInUse, during.idleDecoders, during.decodersMade], [1, 0, 1]);
  speak(pcm.length - at);
  assert.ok((await a.finish()).text.length > 0);
  const after = await engine.stats();
  assert.deepEqual([after.decodersInUse, after.idleDecoders], [0, 1]);
  a.close();
});
