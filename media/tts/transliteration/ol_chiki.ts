// Santali in Ol Chiki → Devanagari, for the Hindi voice to read (espeak-ng has no Santali).
//
// Letter values are the sounds the Unicode character names give (The Unicode Standard, Ol Chiki
// chart U+1C50-U+1C7F): a vowel letter is named L + its vowel (LA a, LAA aa, LI i, LU u, LE e,
// LO o), a consonant letter its vowel + consonant (AT t, AAK k, INY ny, ERR rr, OTT tt, ...);
// OH marks aspiration after a consonant (AAK OH = kh). Ol Chiki is an alphabet (every vowel is
// written); Devanagari an abugida, so a consonant takes the next vowel as its sign, LA (a) is the
// inherent vowel, and a consonant followed by a consonant gets a virama. A word-final consonant
// is left bare, as Devanagari writes Santali and Hindi (the Hindi voice drops the final a).
// sanscript's ol_chiki scheme is not used: it leaves the consonants in Ol Chiki.
import { type Transliteration, TransliterationBuilder } from "./transliteration.ts";

const CONSONANTS: Readonly<Record<string, string>> = {
  "\u1C5B": "त", // AT
  "\u1C5C": "ग", // AG
  "\u1C5D": "ङ", // ANG
  "\u1C5E": "ल", // AL
  "\u1C60": "क", // AAK
  "\u1C61": "ज", // AAJ
  "\u1C62": "म", // AAM
  "\u1C63": "व", // AAW
  "\u1C65": "स", // IS
  "\u1C66": "ह", // IH
  "\u1C67": "ञ", // INY
  "\u1C68": "र", // IR
  "\u1C6A": "च", // UC
  "\u1C6B": "द", // UD
  "\u1C6C": "ण", // UNN
  "\u1C6D": "य", // UY
  "\u1C6F": "प", // EP
  "\u1C70": "ड", // EDD
  "\u1C71": "न", // EN
  "\u1C72": "ड़", // ERR
  "\u1C74": "ट", // OTT
  "\u1C75": "ब", // OB
  "\u1C76": "व", // OV
};

/** OH after these consonants makes the aspirated one. */
const ASPIRATED: Readonly<Record<string, string>> = {
  "क": "ख",
  "ग": "घ",
  "च": "छ",
  "ज": "झ",
  "ट": "ठ",
  "ड": "ढ",
  "ड़": "ढ़",
  "त": "थ",
  "द": "ध",
  "प": "फ",
  "ब": "भ",
};
const OH = "\u1C77";
const LA = "\u1C5A";

/** Vowel letter → [independent vowel, vowel sign after a consonant]. */
const VOWELS: Readonly<Record<string, readonly [string, string]>> = {
  [LA]: ["अ", ""],
  "\u1C5F": ["आ", "ा"], // LAA
  "\u1C64": ["इ", "ि"], // LI
  "\u1C69": ["उ", "ु"], // LU
  "\u1C6E": ["ए", "े"], // LE
  "\u1C73": ["ओ", "ो"], // LO
};

/** MU TTUDDAG and MU-GAAHLAA TTUDDAAG nasalise the vowel before them. */
const NASAL = new Set(["\u1C78", "\u1C7A"]);
/** GAAHLAA TTUDDAAG, RELAA, PHAARKAA, AHAD: vowel quality, length, glottal marks: no letter. */
const SILENT_MARKS = new Set(["\u1C79", "\u1C7B", "\u1C7C", "\u1C7D"]);
const PUNCTUATION: Readonly<Record<string, string>> = { "\u1C7E": "।", "\u1C7F": "॥" };
const VIRAMA = "्";

export function olChikiToDevanagari(text: string): Transliteration {
  const b = new TransliterationBuilder();
  /** The bare consonant last written (waiting for its vowel), with its source span. */
  let consonant: { out: string; start: number } | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    const code = c.charCodeAt(0);
    if (c === OH && consonant && Object.hasOwn(ASPIRATED, consonant.out)) {
      b.replaceLast(consonant.out.length, ASPIRATED[consonant.out], i + 1);
      consonant = { out: ASPIRATED[consonant.out], start: consonant.start };
    } else if (Object.hasOwn(CONSONANTS, c) || c === OH) {
      const out = c === OH ? "ह" : CONSONANTS[c];
      if (consonant) b.push(VIRAMA, consonant.start, i);
      b.push(out, i, i + 1);
      consonant = { out, start: i };
    } else if (Object.hasOwn(VOWELS, c)) {
      const [letter, sign] = VOWELS[c];
      if (!consonant) b.push(letter, i, i + 1);
      else if (sign) b.push(sign, i, i + 1);
      else b.extendLast(i + 1); // the inherent vowel
      consonant = null;
    } else if (NASAL.has(c)) {
      b.push("ँ", i, i + 1);
      consonant = null;
    } else if (SILENT_MARKS.has(c)) {
      if (!b.extendLast(i + 1)) b.push("", i, i + 1);
    } else if (code >= 0x1C50 && code <= 0x1C59) {
      b.push(String.fromCharCode(0x0966 + code - 0x1C50), i, i + 1); // digits
      consonant = null;
    } else {
      b.push(PUNCTUATION[c] ?? c, i, i + 1);
      consonant = null;
    }
  }
  return b.build();
}
