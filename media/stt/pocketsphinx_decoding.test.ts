import assert from "node:assert/strict";
import { CallRecogniser, DecoderPool } from "./pocketsphinx_decoding.ts";
import { enUsArgs } from "./pocketsphinx_ffi.ts";
import { SCRIPTS, speech16k } from "../../tests/helpers/test_speech.ts";
import { werCount } from "./wer.ts";

const LIVE_ONLY = { interimMs: 300, firstUtteranceBatchMaxMs: 0 };
const WITH_BATCH = { interimMs: 300, firstUtteranceBatchMaxMs: 10_000 };

function decode(rec: CallRecogniser, pcm: Int16Array, chunk = 1600): string {
  for (let o = 0; o < pcm.length; o += chunk) rec.push(pcm.subarray(o, o + chunk));
  return rec.finish();
}

Deno.test("the pool keeps spares ready, reuses given-back decoders and frees beyond its cap", () => {
  const pool = new DecoderPool(enUsArgs(), { spares: 1, maxIdle: 1 });
  try {
    assert.equal(pool.fillOne(), true);
    assert.equal(pool.fillOne(), false); // one spare is enough
    const a = pool.take(), b = pool.take();
    assert.deepEqual([pool.idle, pool.inUse, pool.made, pool.waited], [0, 2, 2, 1]);
    pool.give(a.decoder);
    pool.give(b.decoder);
    assert.deepEqual([pool.idle, pool.inUse], [1, 0]); // one kept, one freed
    const c = pool.take();
    assert.equal(c.decoder, a.decoder); // the first given back was kept, and is reused
    pool.give(c.decoder);
  } finally {
    pool.close();
  }
});

Deno.test("idle decoders beyond the spares are freed once unused for idleMs", () => {
  const pool = new DecoderPool(enUsArgs(), { spares: 1, maxIdle: 3, idleMs: 1000 });
  try {
    const taken = [pool.take(), pool.take(), pool.take()];
    for (const t of taken) pool.give(t.decoder);
    assert.equal(pool.idle, 3);
    assert.equal(pool.trim(performance.now()), 0); // not unused long enough yet
    assert.equal(pool.trim(performance.now() + 1000), 2);
    assert.equal(pool.idle, 1); // the spare stays
  } finally {
    pool.close();
  }
});

Deno.test("a call holds a decoder only while its caller speaks", async () => {
  const pcm = await speech16k(SCRIPTS[0]);
  const pool = new DecoderPool(enUsArgs(), { spares: 0, maxIdle: 2 });
  try {
    const rec = new CallRecogniser(pool, LIVE_ONLY);
    assert.equal(rec.decoder, null);
    rec.push(pcm.subarray(0, 1600));
    assert.notEqual(rec.decoder, null);
    assert.equal(pool.inUse, 1);
    rec.push(pcm.subarray(1600));
    assert.ok(rec.finish().length > 0);
    assert.equal(rec.decoder, null);
    assert.deepEqual([pool.inUse, pool.idle], [0, 1]);
    rec.close();
  } finally {
    pool.close();
  }
});

Deno.test("a call's adaptation survives moving to another decoder: decoding equals staying on one", async () => {
  const [x, y, z] = await Promise.all(
    [SCRIPTS[1], SCRIPTS[4], SCRIPTS[6]].map((s) => speech16k(s)),
  );
  // Reference: the call alone, its utterances on one decoder.
  const alone = new DecoderPool(enUsArgs(), { spares: 0, maxIdle: 1, warmPrior: false });
  let expected: { text: string; mean: Float32Array };
  try {
    const rec = new CallRecogniser(alone, LIVE_ONLY);
    decode(rec, x);
    expected = { text: decode(rec, y), mean: rec.adaptation!.mean };
    assert.equal(alone.made, 1);
  } finally {
    alone.close();
  }
  const pool = new DecoderPool(enUsArgs(), { spares: 0, maxIdle: 2, warmPrior: false });
  try {
    const a = new CallRecogniser(pool, LIVE_ONLY), b = new CallRecogniser(pool, LIVE_ONLY);
    b.push(z.subarray(0, 1600)); // b speaks first: its decoder is made first
    const bDecoder = b.decoder;
    a.push(x.subarray(0, 1600));
    const aDecoder = a.decoder;
    a.push(x.subarray(1600));
    a.finish();
    b.push(z.subarray(1600));
    b.finish(); // b's decoder, adapted to b, is now the one handed out next
    a.push(y.subarray(0, 1600));
    assert.equal(a.decoder, bDecoder);
    assert.notEqual(a.decoder, aDecoder);
    a.push(y.subarray(1600));
    const moved = { text: a.finish(), mean: a.adaptation!.mean };
    assert.equal(moved.text, expected.text);
    assert.deepEqual(moved.mean, expected.mean); // bit for bit: nothing of b's audio is in it
    // And the state matters: y as a first utterance ends with another estimate.
    const fresh = new CallRecogniser(pool, LIVE_ONLY);
    decode(fresh, y);
    assert.notDeepEqual(fresh.adaptation!.mean, expected.mean);
  } finally {
    pool.close();
  }
});

Deno.test("a shared language model is freed exactly once, after its last decoder", async () => {
  const pcm = await speech16k(SCRIPTS[0]);
  const pool = new DecoderPool(enUsArgs(), { spares: 0, maxIdle: 0, shareLm: true });
  const a = pool.take().decoder, b = pool.take().decoder;
  const lm = pool.lm!;
  lm.retain(); // the test's own reference, so the model can be counted to the end
  assert.equal(lm.references, 4); // the pool, two decoders, the test
  pool.give(a); // maxIdle 0: freed
  assert.equal(lm.references, 3);
  pool.close(); // the pool lets go; b keeps it alive and still decodes with it
  assert.equal(lm.references, 2);
  b.restartStream();
  b.start();
  b.process(pcm);
  b.end();
  assert.ok(werCount(SCRIPTS[0], b.hyp()).errors <= 1, b.hyp());
  pool.give(b);
  assert.equal(lm.drop(), 0); // the last reference was the test's: freed now, and only now
});

Deno.test("a call's first utterance starts from the prior learnt from earlier calls", async () => {
  const [x, y] = await Promise.all([speech16k(SCRIPTS[3]), speech16k(SCRIPTS[6])]);
  const pool = new DecoderPool(enUsArgs(), { spares: 0, maxIdle: 1 });
  try {
    assert.equal(pool.firstState(), null); // nothing learnt yet: the model's prior
    const first = new CallRecogniser(pool, LIVE_ONLY);
    decode(first, x);
    const afterFirst = first.adaptation!.mean;
    decode(first, y); // only first utterances teach the prior
    const learnt = pool.firstState()!;
    assert.deepEqual(learnt.mean, afterFirst);
    assert.equal(learnt.frames, 0); // counted as nothing: the call's own first utterance replaces it
    // The next call's first utterance is normalised by it (the estimate moves only at its end).
    const next = new CallRecogniser(pool, LIVE_ONLY);
    next.push(y.subarray(0, 1600));
    assert.deepEqual(next.decoder!.cmnEstimate(), learnt.mean);
    next.close();
    first.close();
  } finally {
    pool.close();
  }
});

Deno.test("the first utterance's second pass recognises first utterances better than the model's prior", async () => {
  const pool = new DecoderPool(enUsArgs(), { spares: 0, maxIdle: 1, warmPrior: false });
  const wer = async (options: typeof LIVE_ONLY) => {
    let errors = 0, words = 0;
    for (const script of SCRIPTS) {
      const rec = new CallRecogniser(pool, options);
      const c = werCount(script, decode(rec, await speech16k(script)));
      rec.close();
      errors += c.errors;
      words += c.words;
    }
    return errors / words;
  };
  try {
    const live = await wer(LIVE_ONLY), batch = await wer(WITH_BATCH);
    assert.ok(batch < live, `with the second pass ${batch}, live only ${live}`); // 0.069 vs 0.121
  } finally {
    pool.close();
  }
});

Deno.test("interims come at most once per interimMs of audio and only when changed", async () => {
  const pcm = await speech16k(SCRIPTS[2]); // 3.6 s
  const pool = new DecoderPool(enUsArgs(), { spares: 0, maxIdle: 1 });
  try {
    const rec = new CallRecogniser(pool, WITH_BATCH);
    const interims: string[] = [];
    for (let o = 0; o < pcm.length; o += 320) {
      const t = rec.push(pcm.subarray(o, o + 320));
      if (t !== null) interims.push(t);
    }
    const final = rec.finish();
    assert.ok(interims.length >= 2, interims.join(" | "));
    assert.ok(interims.length <= Math.floor(pcm.length / 4800));
    assert.ok(interims.every((t, i) => t !== "" && t !== interims[i - 1]));
    assert.ok(final.length > 0);
    assert.equal(rec.utterances, 1);
    assert.equal(rec.finish(), ""); // no audio since: no utterance
    assert.equal(rec.utterances, 1);
    rec.close();
  } finally {
    pool.close();
  }
});
