// The seed prior is what a thread really learns from its sentences in festival's voice through
// Opus (derived again here), and a pool seeded with it starts first utterances warm, then lets
// the first call's own estimate replace it whole.
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { speechThroughOpus } from "../../tests/helpers/test_speech.ts";
import { CallRecogniser, DecoderPool } from "./pocketsphinx_decoding.ts";
import { enUsArgs } from "./pocketsphinx_ffi.ts";
import { SPEED_ARGS } from "./pocketsphinx.ts";
import { SEED_PRIOR, SEED_SENTENCES } from "./seed_prior.ts";

const ARGS = { ...enUsArgs(), ...SPEED_ARGS };
const OPTIONS = { interimMs: 300, firstUtteranceBatchMaxMs: 10_000 };

function decode(pool: DecoderPool, pcm: Int16Array): string {
  const r = new CallRecogniser(pool, OPTIONS);
  for (let o = 0; o < pcm.length; o += 320) r.push(pcm.subarray(o, o + 320));
  const text = r.finish();
  r.close();
  return text;
}

Deno.test("the seed prior is what a thread learns from its sentences through Opus", async () => {
  const pool = new DecoderPool(ARGS, { spares: 1, maxIdle: 2, shareLm: true });
  try {
    for (const s of SEED_SENTENCES) decode(pool, await speechThroughOpus(s));
    const learnt = Array.from(pool.firstState()!.mean, (v) => Math.round(v * 100) / 100);
    const off = learnt.map((v, i) => Math.abs(v - SEED_PRIOR[i]));
    // Runs differ by up to ~0.3 (the test voice's WAV is dithered); a changed model, feature
    // set or audio path moves them by whole units.
    assert(
      Math.max(...off) <= 0.75,
      `SEED_PRIOR in media/stt/seed_prior.ts is out of date: derived ${JSON.stringify(learnt)}`,
    );
  } finally {
    pool.close();
  }
});

Deno.test("a seeded pool starts first utterances from the seed, and the first call replaces it", async () => {
  const pool = new DecoderPool(ARGS, {
    spares: 1,
    maxIdle: 2,
    shareLm: true,
    seedPrior: SEED_PRIOR,
  });
  const unseeded = new DecoderPool(ARGS, {
    spares: 0,
    maxIdle: 1,
    seedPrior: SEED_PRIOR,
    warmPrior: false,
  });
  try {
    assertEquals(unseeded.firstState(), null, "no warm prior, no seed");
    const first = pool.firstState()!;
    assertEquals(Array.from(first.mean, (v) => Math.round(v * 100) / 100), [...SEED_PRIOR]);
    assertEquals(
      first.frames,
      0,
      "counted as no frames: the call's own first utterance replaces it",
    );

    const r = new CallRecogniser(pool, OPTIONS);
    const pcm = await speechThroughOpus("what time is it in london");
    for (let o = 0; o < pcm.length; o += 320) r.push(pcm.subarray(o, o + 320));
    r.finish();
    const own = r.adaptation!.mean.slice();
    r.close();
    assertEquals(
      Array.from(pool.firstState()!.mean),
      Array.from(own),
      "the seed is replaced whole",
    );
  } finally {
    pool.close();
    unseeded.close();
  }
});
