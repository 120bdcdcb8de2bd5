import { assertEquals } from "../../tests/helpers/assert.ts";
import { heardText, type WordTiming } from "./heard.ts";

const text = "Once upon a time, there was a fox.";
// Word timings as the synthesis engine reports them.
const words: WordTiming[] = [
  ["Once", 0, 300],
  ["upon", 300, 600],
  ["a", 600, 700],
  ["time", 700, 1100],
  ["there", 1300, 1600],
  ["was", 1600, 1800],
  ["a", 1800, 1900],
  ["fox", 1900, 2300],
].map(([w, s, e], i, all) => {
  const before = all.slice(0, i).filter(([x]) => x === w).length;
  let at = -1;
  for (let k = 0; k <= before; k++) at = text.indexOf(w as string, at + 1);
  return {
    text: w as string,
    charStart: at,
    charEnd: at + (w as string).length,
    startMs: s as number,
    endMs: e as number,
  };
});

Deno.test("nothing is heard before the first word ends", () => {
  assertEquals(heardText(text, words, 0), "");
  assertEquals(heardText(text, words, 299), "");
});

Deno.test("a word cut in the middle is not heard", () => {
  assertEquals(heardText(text, words, 300), "Once");
  assertEquals(heardText(text, words, 1000), "Once upon a");
  assertEquals(heardText(text, words, 1250), "Once upon a time");
});

Deno.test("a cut-off unit's heard text is a strict prefix of the unit", () => {
  for (let ms = 0; ms < 2300; ms += 20) {
    const heard = heardText(text, words, ms);
    assertEquals(text.startsWith(heard) && heard.length < text.length, true, `at ${ms} ms`);
  }
});

Deno.test("a unit played out was heard whole, punctuation included", () => {
  assertEquals(heardText(text, words, 2300), "Once upon a time, there was a fox");
  assertEquals(heardText(text, words, 2300, true), text);
});

Deno.test("word offsets into Devanagari text give a prefix of it", () => {
  const hi = "नमस्ते, आप कैसे हैं?";
  const w: WordTiming[] = [
    { text: "नमस्ते", charStart: 0, charEnd: 6, startMs: 0, endMs: 600 },
    { text: "आप", charStart: 8, charEnd: 10, startMs: 700, endMs: 900 },
  ];
  assertEquals(heardText(hi, w, 650), "नमस्ते");
  assertEquals(heardText(hi, w, 950), "नमस्ते, आप");
});
