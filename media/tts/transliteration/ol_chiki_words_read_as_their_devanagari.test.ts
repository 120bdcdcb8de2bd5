import assert from "node:assert/strict";
import { olChikiToDevanagari } from "./ol_chiki.ts";
import { kashmiriForUrdu } from "./kashmiri.ts";
import { wordSpans } from "../word_timing.ts";
import { onOriginal, type Transliteration } from "./transliteration.ts";

// Santali words in Ol Chiki and their Devanagari readings, letter by letter from the Unicode
// letter names (ol_chiki.ts): LA is the inherent a, GAAHLAA TTUDDAAG (U+1C79) has no letter.
const WORDS: [string, string, string][] = [
  ["ᱥᱟᱱᱛᱟᱲᱤ", "सान्ताड़ि", "santali, the language"],
  ["ᱚᱞ", "अल", "ol, writing"],
  ["ᱪᱤᱠᱤ", "चिकि", "ciki, letters"],
  ["ᱡᱚᱦᱟᱨ", "जहार", "johar, the greeting"],
  ["ᱯᱟᱹᱨᱥᱤ", "पार्सि", "parsi, language"],
  ["ᱫᱤᱥᱚᱢ", "दिसम", "disom, country"],
];

/** Each word of the transliteration, put back on the original, is the original's word. */
function assertWordsMapBack(original: string, t: Transliteration) {
  const out = wordSpans(t.text), inn = wordSpans(original);
  assert.equal(out.length, inn.length);
  out.forEach((s, i) => {
    const w = onOriginal(t, original, {
      text: t.text.slice(s.start, s.end),
      charStart: s.start,
      charEnd: s.end,
      startMs: 0,
      endMs: 0,
    });
    assert.deepEqual([w.charStart, w.charEnd, w.text], [
      inn[i].start,
      inn[i].end,
      original.slice(inn[i].start, inn[i].end),
    ]);
  });
}

Deno.test("Santali words in Ol Chiki read as their Devanagari spelling", () => {
  for (const [olChiki, devanagari, meaning] of WORDS) {
    assert.equal(olChikiToDevanagari(olChiki).text, devanagari, meaning);
  }
});

Deno.test("every Devanagari word maps back to its Ol Chiki word, offsets included", () => {
  const sentence = "ᱡᱚᱦᱟᱨ, ᱥᱟᱱᱛᱟᱲᱤ ᱯᱟᱹᱨᱥᱤ ᱚᱞ ᱪᱤᱠᱤ ᱛᱮ ᱚᱞᱚᱜ ᱠᱟᱱᱟ᱾";
  const t = olChikiToDevanagari(sentence);
  assert.equal(t.text, "जहार, सान्ताड़ि पार्सि अल चिकि ते अलग काना।");
  assertWordsMapBack(sentence, t);
  // Every output unit comes from a span of the input, in order.
  for (let i = 0; i < t.text.length; i++) {
    assert.ok(t.from[i] < t.to[i] && t.to[i] <= sentence.length);
    if (i > 0) assert.ok(t.from[i] >= t.from[i - 1]);
  }
});

Deno.test("OH aspirates the consonant before it; digits and marks have Devanagari forms", () => {
  // AAK OH, OB OH, ERR OH: kh, bh, rrh; OH alone is h.
  assert.equal(olChikiToDevanagari("ᱠᱷᱟ ᱵᱷᱤ ᱲᱷᱩ ᱷᱟ").text, "खा भि ढ़ु हा");
  // MU TTUDDAG nasalises; digits 1 2 5; a word with no Ol Chiki passes through.
  assert.equal(olChikiToDevanagari("ᱦᱟᱸ ᱑᱒᱕ OK").text, "हाँ १२५ OK");
  const t = olChikiToDevanagari("ᱠᱷᱟ ᱵᱷᱤ");
  assertWordsMapBack("ᱠᱷᱟ ᱵᱷᱤ", t);
  assert.deepEqual([t.from[0], t.to[0]], [0, 2]); // kh came from AAK and OH
});

Deno.test("Kashmiri letters Urdu lacks become Urdu letters, one for one", () => {
  const text = "آداب، کٲشُر چھُ سٲنۍ مٲجۍ زَبان۔";
  const t = kashmiriForUrdu(text);
  assert.equal(t.text, "آداب، کاشُر چھُ سانی ماجی زَبان۔");
  assertWordsMapBack(text, t);
});
