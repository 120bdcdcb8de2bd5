import assert from "node:assert/strict";
import type { EspeakEvent } from "../../wasm/espeak.ts";
import { WordAligner, wordSpans } from "./word_timing.ts";

const word = (charIndex: number, audioMs: number): EspeakEvent => ({
  type: "word",
  charIndex,
  length: 0,
  audioMs,
});
const phone = (audioMs: number, id = "a"): EspeakEvent => ({
  type: "phoneme",
  charIndex: 0,
  length: 0,
  audioMs,
  id,
});

Deno.test("word spans are whitespace tokens without edge punctuation", () => {
  const text = `"Hello," she said (twice) — <okay>? 😀 don't`;
  assert.deepEqual(
    wordSpans(text).map((s) => text.slice(s.start, s.end)),
    ["Hello", "she", "said", "twice", "—", "okay", "😀", "don't"],
  );
  assert.deepEqual(wordSpans("  "), []);
});

Deno.test("a word ends where its trailing pause starts, not at the next word", () => {
  const text = "Hello, world.";
  const a = new WordAligner(text);
  assert.deepEqual(a.push([word(0, 0), phone(11), phone(219), phone(439, ""), phone(589, "")]), []);
  const [hello] = a.push([word(7, 589), phone(600), phone(958)]);
  assert.deepEqual(hello, { text: "Hello", charStart: 0, charEnd: 5, startMs: 0, endMs: 439 });
  const [world] = a.finish(1324);
  assert.deepEqual(world, { text: "world", charStart: 7, charEnd: 12, startMs: 589, endMs: 1324 });
  assert.deepEqual(a.finish(2000), []);
});

Deno.test("several spoken words of one token make one word timing", () => {
  // "3.5 km": espeak says three (at 0) point (at 1) five (at 1), all inside the token "3.5".
  const a = new WordAligner("it is 3.5 km");
  const out = [
    ...a.push([word(0, 0), phone(10), word(3, 150), phone(160)]),
    ...a.push([word(6, 300), phone(310), word(7, 500), phone(510), word(7, 700), phone(710)]),
    ...a.push([word(10, 900), phone(910)]),
    ...a.finish(1200),
  ];
  assert.deepEqual(out.map((w) => [w.text, w.startMs, w.endMs]), [
    ["it", 0, 150],
    ["is", 150, 300],
    ["3.5", 300, 900],
    ["km", 900, 1200],
  ]);
});

Deno.test("an event in whitespace belongs to the token before it", () => {
  // espeak reads "😀" as two words, the second reported at the following space.
  const text = "smile 😀 then";
  const a = new WordAligner(text);
  const out = [
    ...a.push([word(0, 0), phone(1), word(6, 354), phone(360), word(8, 683), phone(690)]),
    ...a.push([word(9, 977), phone(980)]),
    ...a.finish(1300),
  ];
  assert.deepEqual(out.map((w) => w.text), ["smile", "😀", "then"]);
  assert.equal(out[1].endMs, 977);
});

Deno.test("a pause inside a word does not end it; only the trailing one does", () => {
  const a = new WordAligner("ab cd");
  const [ab] = a.push([
    word(0, 0),
    phone(5),
    phone(50, ""),
    phone(60),
    phone(100, ""),
    word(3, 200),
  ]);
  assert.equal(ab.endMs, 100);
});
