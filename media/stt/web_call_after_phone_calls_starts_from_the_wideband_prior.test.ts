// Phone calls teach a thread a narrowband prior; a web call after them must still start from the
// wideband one (a single prior would have moved towards the phone band, and web calls' first
// utterances would be misread as phone calls' were before: bench/media/phone_recognition.ts).
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { pushFrames, SCRIPTS, speechThroughOpus } from "../../tests/helpers/test_speech.ts";
import { speechThroughPhone } from "../../tests/helpers/phone_speech.ts";
import { CallRecogniser, DecoderPool } from "./pocketsphinx_decoding.ts";
import { enUsArgs } from "./pocketsphinx_ffi.ts";
import { PocketsphinxEngine, SPEED_ARGS } from "./pocketsphinx.ts";
import { NARROWBAND_SEED_PRIOR, SEED_PRIOR } from "./seed_prior.ts";
import { werCount } from "./wer.ts";

const EN = "LANGUAGE_EN";
const OPTIONS = { interimMs: 300, firstUtteranceBatchMaxMs: 10_000 };
const round = (m: Float32Array) => Array.from(m, (v) => Math.round(v * 100) / 100);

/** 20 ms frames into a recogniser of the thread's own (no engine between). */
function feed(r: CallRecogniser, pcm: Int16Array) {
  for (let o = 0; o < pcm.length; o += 320) r.push(pcm.subarray(o, o + 320));
}

Deno.test("a web call after phone calls has its first utterance read as well as before them", async () => {
  await using engine = await PocketsphinxEngine.create({ threads: 1 });
  for (const script of SCRIPTS.slice(0, 4)) {
    const phone = await engine.open(EN, { channel: "narrowband" });
    pushFrames(phone, await speechThroughPhone(script));
    await phone.finish();
    phone.close();
  }
  let errors = 0, words = 0;
  const heard: string[] = [];
  for (const script of SCRIPTS) {
    const web = await engine.open(EN); // a web call: the default channel
    pushFrames(web, await speechThroughOpus(script));
    const { text } = await web.finish();
    web.close();
    heard.push(text);
    const c = werCount(script, text);
    errors += c.errors;
    words += c.words;
  }
  const wer = errors / words;
  console.log(`web first utterances after phone calls: WER ${wer.toFixed(3)}`);
  // The bound of web first utterances on a fresh engine (pocketsphinx.test.ts). Measured 0.103;
  // with one prior for web and phone calls (before) 0.259.
  assert(wer <= 0.15, `WER ${wer.toFixed(3)}: ${heard.join(" | ")}`);
});

Deno.test("phone calls leave the wideband prior where web calls left it", async () => {
  const pool = new DecoderPool({ ...enUsArgs(), ...SPEED_ARGS }, {
    spares: 1,
    maxIdle: 2,
    shareLm: true,
    seedPriors: { wideband: SEED_PRIOR, narrowband: NARROWBAND_SEED_PRIOR },
  });
  try {
    for (const script of SCRIPTS.slice(0, 3)) {
      const phone = new CallRecogniser(pool, OPTIONS, "narrowband");
      feed(phone, await speechThroughPhone(script));
      phone.finish();
      phone.close();
    }
    assertEquals(round(pool.firstState("wideband")!.mean), [...SEED_PRIOR]);
    assert(
      round(pool.firstState("narrowband")!.mean).some((v, i) => v !== NARROWBAND_SEED_PRIOR[i]),
      "the phone calls did teach the narrowband prior",
    );
    const web = new CallRecogniser(pool, OPTIONS); // default: wideband
    web.push((await speechThroughOpus(SCRIPTS[4])).subarray(0, 320));
    assertEquals(round(web.decoder!.cmnEstimate()!), [...SEED_PRIOR]);
    web.close();
  } finally {
    pool.close();
  }
});
