import assert from "node:assert/strict";
import { CallRecogniser, DecoderPool } from "./pocketsphinx_decoding.ts";
import { enUsArgs } from "./pocketsphinx_ffi.ts";
import { SCRIPTS, speech16k } from "./test_speech.ts";
import { werCount } from "./wer.ts";

const LIVE_ONLY = { interimMs: 300, firstUtteranceBatchMaxMs: 0 };
const WITH_BATCH = { interimMs: 300, firstUtteranceBatchMaxMs: 10_000 };

function decode(rec: CallRecogniser, pcm: Int16Array, chunk = 1600): string {
  for (let o = 0; o < pcm.length; o += chunk) rec.push(pcm.subarray(o, o + chunk));
  return rec.finish();
}

Deno.test("the pool keeps spares ready, reuses given-back decoders and frees beyond its cap", () => {
  const pool = new DecoderPool(enUsArgs(), 1, 1);
  try {
    assert.equal(pool.fillOne(), true);
    assert.equal(pool.fillOne(), false); // one spare is enough
    const a = pool.take(), b = pool.take();
    assert.deepEqual([pool.idle, pool.inUse], [0, 2]);
    pool.give(a.decoder);
    pool.give(b.decoder);
    assert.deepEqual([pool.idle, pool.inUse], [1, 0]); // one kept, one freed
    const c = pool.take();
    assert.equal(c.decoder, a.decoder); // the first given back was kept, and is reused
    pool.give(c.decoder);
  } finally {
    pool.freeIdle();
  }
});

Deno.test("a reused decoder recognises a new call's first utterance like a fresh one", async () => {
  const [x, y] = await Promise.all([speech16k(SCRIPTS[3]), speech16k(SCRIPTS[6])]);
  const pool = new DecoderPool(enUsArgs(), 0, 1);
  try {
    const fresh = pool.take().decoder;
    const expected = decode(new CallRecogniser(fresh, LIVE_ONLY), x);
    pool.give(fresh);
    const used = pool.take().decoder;
    const call = new CallRecogniser(used, LIVE_ONLY);
    decode(call, y);
    decode(call, y);
    pool.give(used);
    const again = pool.take().decoder;
    assert.equal(again, used);
    assert.equal(decode(new CallRecogniser(again, LIVE_ONLY), x), expected);
    pool.give(again);
  } finally {
    pool.freeIdle();
  }
});

Deno.test("the first utterance's second pass recognises first utterances better", async () => {
  const pool = new DecoderPool(enUsArgs(), 0, 1);
  const wer = async (options: typeof LIVE_ONLY) => {
    let errors = 0, words = 0;
    for (const script of SCRIPTS) {
      const d = pool.take().decoder;
      const c = werCount(script, decode(new CallRecogniser(d, options), await speech16k(script)));
      pool.give(d);
      errors += c.errors;
      words += c.words;
    }
    return errors / words;
  };
  try {
    const live = await wer(LIVE_ONLY), batch = await wer(WITH_BATCH);
    assert.ok(batch < live, `with the second pass ${batch}, live only ${live}`); // 0.069 vs 0.121
  } finally {
    pool.freeIdle();
  }
});

Deno.test("interims come at most once per interimMs of audio and only when changed", async () => {
  const pcm = await speech16k(SCRIPTS[2]); // 3.6 s
  const pool = new DecoderPool(enUsArgs(), 0, 1);
  try {
    const d = pool.take().decoder;
    const rec = new CallRecogniser(d, WITH_BATCH);
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
    pool.give(d);
  } finally {
    pool.freeIdle();
  }
});
