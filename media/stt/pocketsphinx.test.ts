import assert from "node:assert/strict";
import { RecognitionError, UnservedLanguageError } from "./engine.ts";
import { PocketsphinxEngine } from "./pocketsphinx.ts";
import {
  pushFrames,
  SCRIPTS,
  speech16k,
  speechThroughOpus,
  type TestVoice,
} from "../../tests/helpers/test_speech.ts";
import { werCount, wordErrorRate } from "./wer.ts";

/** WER over SCRIPTS, each the first utterance of its own stream (a call's hardest case). */
async function firstUtteranceWer(
  engine: PocketsphinxEngine,
  audio: (text: string) => Promise<Int16Array>,
): Promise<{ wer: number; heard: string[] }> {
  let errors = 0, words = 0;
  const heard: string[] = [];
  for (const script of SCRIPTS) {
    const stream = await engine.open("LANGUAGE_EN");
    pushFrames(stream, await audio(script));
    const { text } = await stream.finish();
    stream.close();
    const c = werCount(script, text);
    errors += c.errors;
    words += c.words;
    heard.push(text);
  }
  return { wer: errors / words, heard };
}

// Bounds: measured WER (this machine, Debian 12 pocketsphinx 0.8+5prealpha) with margin.
const BOUNDS: Record<TestVoice, { direct: number; opus: number }> = {
  festival: { direct: 0.15, opus: 0.15 }, // measured 0.069 / 0.086
  espeak: { direct: 0.85, opus: 0.6 }, // measured 0.64 / 0.41: espeak's formant voice is hard
};

for (const voice of ["festival", "espeak"] as const) {
  Deno.test(`${voice} speech at 16 kHz is recognised within WER ${BOUNDS[voice].direct}`, async () => {
    await using engine = await PocketsphinxEngine.create();
    const { wer, heard } = await firstUtteranceWer(engine, (t) => speech16k(t, voice));
    assert.ok(wer <= BOUNDS[voice].direct, `WER ${wer.toFixed(3)}: ${heard.join(" | ")}`);
  });

  Deno.test(`${voice} speech through Opus is recognised within WER ${BOUNDS[voice].opus}`, async () => {
    await using engine = await PocketsphinxEngine.create();
    const { wer, heard } = await firstUtteranceWer(engine, (t) => speechThroughOpus(t, voice));
    assert.ok(wer <= BOUNDS[voice].opus, `WER ${wer.toFixed(3)}: ${heard.join(" | ")}`);
  });
}

Deno.test("utterances after the first on one stream are recognised too", async () => {
  await using engine = await PocketsphinxEngine.create();
  const stream = await engine.open("LANGUAGE_EN");
  let errors = 0, words = 0;
  for (const script of SCRIPTS.slice(0, 4)) {
    pushFrames(stream, await speechThroughOpus(script));
    const { text } = await stream.finish();
    const c = werCount(script, text);
    errors += c.errors;
    words += c.words;
  }
  stream.close();
  assert.ok(errors / words <= 0.2, `WER ${errors / words}`); // measured 0.032
});

Deno.test("interim text arrives while the utterance is open, before its final text", async () => {
  await using engine = await PocketsphinxEngine.create();
  const stream = await engine.open("LANGUAGE_EN");
  const interims: string[] = [];
  const first = new Promise<void>((resolve) =>
    stream.onInterim((t) => {
      interims.push(t);
      resolve();
    })
  );
  pushFrames(stream, await speech16k(SCRIPTS[2]));
  await first; // finish() only once an interim came: the order is the engine's, not timing's
  const { text } = await stream.finish();
  stream.close();
  assert.ok(interims.length >= 1 && interims.every((t) => t.length > 0));
  assert.ok(wordErrorRate(SCRIPTS[2], text) <= 0.2, text);
});

Deno.test("no interim text is delivered for an utterance after its finish()", async () => {
  await using engine = await PocketsphinxEngine.create();
  const stream = await engine.open("LANGUAGE_EN");
  const interims: string[] = [];
  stream.onInterim((t) => interims.push(t));
  pushFrames(stream, await speech16k(SCRIPTS[2])); // 3.6 s: the thread has interims to send
  const { text } = await stream.finish(); // called before the thread decoded anything
  stream.close();
  assert.ok(text.length > 0);
  assert.deepEqual(interims, []);
});

for (const threads of [1, 2]) {
  Deno.test(`two streams recognised in parallel on ${threads} thread(s) keep their own text`, async () => {
    await using engine = await PocketsphinxEngine.create({ threads });
    const [a, b] = [SCRIPTS[1], SCRIPTS[4]];
    const [pa, pb] = await Promise.all([speechThroughOpus(a), speechThroughOpus(b)]);
    const sa = await engine.open("LANGUAGE_EN"), sb = await engine.open("LANGUAGE_EN");
    // Frames interleaved, as two calls' audio reaches the worker.
    for (let o = 0; o < Math.max(pa.length, pb.length); o += 320) {
      if (o < pa.length) sa.push(pa.subarray(o, o + 320));
      if (o < pb.length) sb.push(pb.subarray(o, o + 320));
    }
    const [ra, rb] = await Promise.all([sa.finish(), sb.finish()]);
    sa.close();
    sb.close();
    assert.ok(wordErrorRate(a, ra.text) <= 0.25, ra.text);
    assert.ok(wordErrorRate(b, rb.text) <= 0.25, rb.text);
    assert.ok(wordErrorRate(b, ra.text) > 0.75 && wordErrorRate(a, rb.text) > 0.75);
  });
}

Deno.test("finish() with no audio gives empty text, also after an utterance", async () => {
  await using engine = await PocketsphinxEngine.create();
  const stream = await engine.open("LANGUAGE_EN");
  assert.deepEqual(await stream.finish(), { text: "", audioMs: 0 });
  pushFrames(stream, await speech16k(SCRIPTS[0]));
  assert.ok((await stream.finish()).text.length > 0);
  assert.deepEqual(await stream.finish(), { text: "", audioMs: 0 });
  stream.close();
});

Deno.test("audioMs is the duration pushed for the utterance", async () => {
  await using engine = await PocketsphinxEngine.create();
  const stream = await engine.open("LANGUAGE_EN");
  const pcm = await speech16k(SCRIPTS[0]);
  pushFrames(stream, pcm);
  assert.equal((await stream.finish()).audioMs, (pcm.length * 1000) / 16000);
  stream.push(new Int16Array(1600)); // 100 ms of silence: an utterance of its own
  assert.deepEqual(await stream.finish(), { text: "", audioMs: 100 });
  stream.close();
});

Deno.test("decoders are shared between calls that do not speak at once", async () => {
  await using engine = await PocketsphinxEngine.create({ threads: 1, spareDecoders: 1 });
  const [pa, pb] = await Promise.all([speech16k(SCRIPTS[1]), speech16k(SCRIPTS[4])]);
  const a = await engine.open("LANGUAGE_EN"), b = await engine.open("LANGUAGE_EN");
  for (const [stream, pcm] of [[a, pa], [b, pb], [a, pb], [b, pa]] as const) {
    pushFrames(stream, pcm);
    assert.ok((await stream.finish()).text.length > 0);
  }
  const s = await engine.stats();
  // One decoder for the one caller speaking at a time, plus at most the spare kept ready (a
  // decoder per call would be two held and a spare).
  assert.deepEqual([s.streams, s.decodersInUse, s.utterancesWaited], [2, 0, 0]);
  assert.ok(s.decodersMade <= 2, `${s.decodersMade} decoders made`);
  a.close();
  b.close();
});

Deno.test("calls speaking at once each hold a decoder until their utterance ends", async () => {
  await using engine = await PocketsphinxEngine.create({ threads: 1, spareDecoders: 1 });
  const pcm = await speech16k(SCRIPTS[0]);
  const a = await engine.open("LANGUAGE_EN"), b = await engine.open("LANGUAGE_EN");
  a.push(pcm.subarray(0, 3200));
  b.push(pcm.subarray(0, 3200));
  const during = await engine.stats();
  assert.equal(during.decodersInUse, 2);
  await Promise.all([a.finish(), b.finish()]);
  const after = await engine.stats();
  assert.equal(after.decodersInUse, 0);
  assert.ok(after.idleDecoders >= 2); // kept for the next utterances (up to maxIdleDecoders)
  a.close();
  b.close();
});

Deno.test("closing a stream rejects its pending finish() and later calls", async () => {
  await using engine = await PocketsphinxEngine.create();
  const stream = await engine.open("LANGUAGE_EN");
  pushFrames(stream, await speech16k(SCRIPTS[0]));
  const pending = stream.finish();
  stream.close();
  await assert.rejects(pending, RecognitionError);
  await assert.rejects(stream.finish(), RecognitionError);
});

Deno.test("another language than English is refused with UnservedLanguageError", async () => {
  await using engine = await PocketsphinxEngine.create();
  assert.deepEqual([...engine.languages], ["LANGUAGE_EN"]);
  const err = await engine.open("LANGUAGE_HI").catch((e) => e);
  assert.ok(err instanceof UnservedLanguageError);
  assert.match(err.message, /LANGUAGE_HI.*served: LANGUAGE_EN/);
});

Deno.test("a closed engine fails its streams and refuses new ones", async () => {
  const engine = await PocketsphinxEngine.create();
  const stream = await engine.open("LANGUAGE_EN");
  pushFrames(stream, await speech16k(SCRIPTS[0]));
  const failed = assert.rejects(stream.finish(), RecognitionError);
  await engine.close();
  await failed;
  await assert.rejects(engine.open("LANGUAGE_EN"), RecognitionError);
  stream.close();
});
