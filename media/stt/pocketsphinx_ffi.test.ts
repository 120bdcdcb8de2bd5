import assert from "node:assert/strict";
import {
  checkInstalled,
  EN_US_MODEL_DIR,
  enUsArgs,
  modelCmnInit,
  PocketsphinxMissingError,
  PsDecoder,
  SharedLm,
} from "./pocketsphinx_ffi.ts";
import { speech16k } from "../../tests/helpers/test_speech.ts";

Deno.test("a missing model file is reported with the apt packages to install", () => {
  const err = assert.throws(() => checkInstalled(["/nonexistent/en-us/mdef"]), (e: unknown) => {
    assert.ok(e instanceof PocketsphinxMissingError);
    assert.match(e.message, /\/nonexistent\/en-us\/mdef is missing/);
    assert.match(
      e.message,
      /apt-get install -y pocketsphinx pocketsphinx-en-us libpocketsphinx-dev/,
    );
    return true;
  });
  assert.equal(err, undefined);
});

Deno.test("an unknown decoder option is refused", () => {
  assert.throws(() => new PsDecoder({ ...enUsArgs(), no_such_option: "1" }), /rejected/);
});

Deno.test("a decoder that forgot its adaptation decodes exactly like a fresh one", async () => {
  const pcm = await speech16k("turn on the lights in the kitchen");
  const prior = modelCmnInit(`${EN_US_MODEL_DIR}/en-us`)!;
  const d = new PsDecoder(enUsArgs());
  try {
    assert.ok(d.canForgetAdaptation);
    const close = (a: Float32Array, b: Float32Array) =>
      a.every((x, i) => Math.abs(x - b[i]) < 1e-3);
    assert.ok(close(d.cmnEstimate()!, prior));
    const decode = () => {
      d.start();
      d.process(pcm);
      d.end();
      return { text: d.hyp(), cmn: d.cmnEstimate()! };
    };
    const fresh = decode();
    assert.ok(!close(fresh.cmn, prior)); // the utterance moved the estimate
    decode(); // and again: now it mixes two utterances
    assert.ok(d.forgetAdaptation());
    assert.ok(close(d.cmnEstimate()!, prior));
    const again = decode();
    assert.equal(again.text, fresh.text);
    assert.deepEqual(again.cmn, fresh.cmn); // exactly: nothing of the earlier audio remains
  } finally {
    d.free();
  }
});

Deno.test("decoders sharing one language model, interleaved, decode like decoders with their own", async () => {
  const [x, y] = await Promise.all([
    speech16k("what is the weather like today"),
    speech16k("i lost my credit card yesterday"),
  ]);
  const { lm: path, ...rest } = enUsArgs();
  const first = new PsDecoder(rest);
  const lm = new SharedLm(path, first);
  first.useLm(lm);
  const second = new PsDecoder(enUsArgs(), lm);
  const ownX = new PsDecoder(enUsArgs()), ownY = new PsDecoder(enUsArgs());
  try {
    // 100 ms each in turn: the shared model's caches see both searches mixed.
    const run = (pairs: [PsDecoder, Int16Array][]) => {
      for (const [d] of pairs) d.start();
      const longest = Math.max(...pairs.map(([, p]) => p.length));
      for (let o = 0; o < longest; o += 1600) {
        for (const [d, p] of pairs) if (o < p.length) d.process(p.subarray(o, o + 1600));
      }
      return pairs.map(([d]) => (d.end(), d.hyp()));
    };
    const shared = run([[first, x], [second, y]]);
    const own = run([[ownX, x], [ownY, y]]);
    assert.deepEqual(shared, own);
    assert.ok(shared[0].includes("weather"), shared[0]);
  } finally {
    for (const d of [first, second, ownX, ownY]) d.free();
    assert.equal(lm.release(), 0); // the decoders let go first: this was the last reference
  }
});
