import assert from "node:assert/strict";
import { werCount, wordErrorRate, words } from "./wer.ts";

Deno.test("words are lower-cased with punctuation dropped and apostrophes kept", () => {
  assert.deepEqual(words("  Don't STOP, believing!  "), ["don't", "stop", "believing"]);
});

Deno.test("word error rate counts substitutions, deletions and insertions per reference word", () => {
  assert.deepEqual(werCount("turn on the lights", "turn off the lights"), { errors: 1, words: 4 });
  assert.deepEqual(werCount("turn on the lights", "turn the lights"), { errors: 1, words: 4 });
  assert.deepEqual(werCount("turn on the lights", "turn on all the lights"), {
    errors: 1,
    words: 4,
  });
  assert.equal(wordErrorRate("a b", "c d e f"), 2);
  assert.equal(wordErrorRate("What is it?", "what is it"), 0);
});

Deno.test("word error rate of empty texts", () => {
  assert.equal(wordErrorRate("", ""), 0);
  assert.equal(wordErrorRate("", "noise"), 1);
  assert.equal(wordErrorRate("hello there", ""), 1);
});
