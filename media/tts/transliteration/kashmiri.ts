// Kashmiri (Perso-Arabic) for the Urdu voice: the letters and vowel marks Kashmiri adds to the
// Urdu alphabet become the nearest Urdu letter, or nothing for a mark, one character at a time,
// so offsets on the original text survive. Without this the Urdu voice skips those letters.
import { type Transliteration, TransliterationBuilder } from "./transliteration.ts";

const LETTERS: Readonly<Record<string, string>> = {
  "\u0672": "ا", // ALEF WITH WAVY HAMZA ABOVE (ə:)
  "\u0673": "ا", // ALEF WITH WAVY HAMZA BELOW (ɨ:)
  "\u06C4": "و", // WAW WITH RING (o)
  "\u06C6": "و", // OE (ɔ)
  "\u06CE": "ی", // YEH WITH SMALL V (e)
  "\u0620": "ی", // KASHMIRI YEH
  "\u06CD": "ی", // YEH WITH TAIL (palatalisation)
};
/** Vowel marks Urdu has no use for: HAMZA BELOW, SMALL V ABOVE, INVERTED SMALL V, WAVY HAMZA. */
const MARKS = new Set(["\u0655", "\u065A", "\u065B", "\u065F"]);

export function kashmiriForUrdu(text: string): Transliteration {
  const b = new TransliterationBuilder();
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (MARKS.has(c)) {
      if (!b.extendLast(i + 1)) b.push("", i, i + 1);
    } else b.push(LETTERS[c] ?? c, i, i + 1);
  }
  return b.build();
}
