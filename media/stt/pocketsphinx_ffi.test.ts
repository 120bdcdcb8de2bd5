import assert from "node:assert/strict";
import {
  checkInstalled,
  EN_US_MODEL_DIR,
  enUsArgs,
  modelCmnInit,
  PocketsphinxMissingError,
  PsDecoder,
} from "./pocketsphinx_ffi.ts";
import { speech16k } from "./test_speech.ts";

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
