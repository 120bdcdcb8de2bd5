import assert from "node:assert/strict";
import { heardText } from "../speech/heard.ts";
import { estimateWordTimings } from "./estimated_timing.ts";

const HINDI = "नमस्ते, आज मौसम बहुत अच्छा है।";
const BENGALI = "নমস্কার, আজ আবহাওয়া খুব ভালো। কাল বৃষ্টি হবে।";
const OL_CHIKI = "ᱡᱚᱦᱟᱨ, ᱟᱢ ᱪᱮᱫ ᱞᱮᱠᱟ ᱢᱮᱱᱟᱢᱟ? ᱤᱧ ᱵᱮᱥ ᱢᱮᱱᱟᱧ ᱾";

const graphemeEnds = (text: string) =>
  new Set(
    [...new Intl.Segmenter(undefined, { granularity: "grapheme" }).segment(text)]
      .map((s) => s.index + s.segment.length),
  );

Deno.test("Devanagari: whole words, in order, from 0 to the end of the audio", () => {
  const words = estimateWordTimings(HINDI, 2500);
  assert.deepEqual(words.map((w) => w.text), ["नमस्ते", "आज", "मौसम", "बहुत", "अच्छा", "है"]);
  for (const w of words) {
    assert.equal(HINDI.slice(w.charStart, w.charEnd), w.text);
    assert.equal(w.estimated, true);
    assert.ok(w.startMs <= w.endMs);
  }
  for (let i = 1; i < words.length; i++) assert.ok(words[i].startMs >= words[i - 1].endMs);
  assert.equal(words[0].startMs, 0);
  assert.equal(words.at(-1)!.endMs, 2500);
  // The offsets are word ends: the danda after "है" and the comma after "नमस्ते" are left out.
  assert.equal(words[0].charEnd, HINDI.indexOf(","));
  assert.equal(words.at(-1)!.charEnd, HINDI.indexOf("।"));
});

Deno.test("longer words take longer, and a comma is a longer pause than a space", () => {
  const words = estimateWordTimings(HINDI, 2500);
  const dur = (i: number) => words[i].endMs - words[i].startMs;
  assert.ok(dur(0) > dur(1), "नमस्ते is not longer than आज"); // 3 graphemes vs 2
  const afterComma = words[1].startMs - words[0].endMs;
  const afterSpace = words[2].startMs - words[1].endMs;
  assert.ok(afterComma > afterSpace * 3, `${afterComma} ms after the comma, ${afterSpace} ms`);
});

Deno.test("a sentence end is a longer pause than a comma", () => {
  const words = estimateWordTimings(BENGALI, 4000);
  const gap = (i: number) => words[i].startMs - words[i - 1].endMs;
  const comma = gap(1); // after "নমস্কার,"
  const sentence = words.findIndex((w) => w.text === "কাল");
  assert.ok(gap(sentence) > comma, `${gap(sentence)} ms after the sentence, ${comma} ms`);
});

for (const [name, text] of [["Bengali", BENGALI], ["Ol Chiki", OL_CHIKI], ["Hindi", HINDI]]) {
  Deno.test(`${name}: a heard prefix always ends at a word end, never inside a grapheme`, () => {
    const words = estimateWordTimings(text, 3000);
    const ends = graphemeEnds(text);
    for (const w of words) {
      assert.ok(ends.has(w.charEnd), `"${w.text}" ends inside a grapheme`);
      assert.ok(!/^\p{M}/u.test(text.slice(w.charEnd)), `a mark is left after "${w.text}"`);
    }
    const prefixes = new Set(words.map((w) => text.slice(0, w.charEnd)));
    for (let played = 0; played <= 3000; played += 50) {
      const heard = heardText(text, words, played);
      assert.ok(heard === "" || prefixes.has(heard), `heard "${heard}" after ${played} ms`);
    }
    assert.equal(heardText(text, words, 3000), text.slice(0, words.at(-1)!.charEnd));
  });
}

Deno.test("no words, no timings; no audio, all at 0", () => {
  assert.deepEqual(estimateWordTimings("", 1000), []);
  assert.deepEqual(estimateWordTimings(" \n ", 1000), []);
  const words = estimateWordTimings("one two", 0);
  assert.deepEqual(words.map((w) => [w.startMs, w.endMs]), [[0, 0], [0, 0]]);
});

Deno.test("offsets are UTF-16, as the interface says, with astral characters before", () => {
  const text = "😀 hi 𝒳y";
  const words = estimateWordTimings(text, 900);
  assert.deepEqual(words.map((w) => [w.text, w.charStart, w.charEnd]), [
    ["😀", 0, 2],
    ["hi", 3, 5],
    ["𝒳y", 6, 9],
  ]);
});
