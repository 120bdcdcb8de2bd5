import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { ROSTER_LANGUAGES } from "../../common/capabilities.ts";
import {
  endsHesitant,
  isBackchannel,
  languageCode,
  LEXICON_DATA,
  looksComplete,
  normalize,
} from "./lexicon.ts";

Deno.test("every roster language has a lexicon file with every list filled", () => {
  for (const language of ROSTER_LANGUAGES) {
    const code = language.replace("LANGUAGE_", "").toLowerCase();
    const data = LEXICON_DATA[code];
    assert(data, `no lexicons/${code}.json`);
    assertEquals(data.language, code);
    assertEquals(languageCode(language), code);
    for (
      const list of [
        "backchannels",
        "hesitations",
        "connectives",
        "complete_phrases",
        "closers",
        "numbers",
      ] as const
    ) {
      assert(data[list].length > 0, `${code}: ${list} is empty`);
      for (const p of data[list]) {
        assert(normalize(p) !== "", `${code}: "${p}" is only punctuation`);
      }
    }
    assert(data.question_starts.length + data.question_words.length > 0, `${code}: no questions`);
    const w = data.end_of_turn;
    assert(w.complete_ms < w.neutral_ms && w.neutral_ms < w.hesitant_ms, `${code}: windows`);
  }
});

Deno.test("normalising lowers case, drops punctuation and composes Unicode (NFC)", () => {
  assertEquals(normalize("  Mm-hmm, OKAY!! "), "mm hmm okay");
  assertEquals(normalize("हाँ।"), "हाँ");
  // "ō" decomposed (o + combining macron) and composed compare equal.
  assertEquals(normalize("o\u0304k"), normalize("\u014dk"));
});

Deno.test("English: backchannels, fillers and noise are told from real turns", () => {
  for (const t of ["yeah", "Okay.", "mm hmm", "uh huh", "yeah yeah okay", "right", "um", ""]) {
    assert(isBackchannel(t, "LANGUAGE_EN"), `"${t}" should be a backchannel`);
  }
  for (const t of ["wait stop", "yeah but what about tomorrow", "no", "tell me more"]) {
    assert(!isBackchannel(t, "LANGUAGE_EN"), `"${t}" is not a backchannel`);
  }
  assert(endsHesitant("I would like to um", "en"));
  assert(endsHesitant("I want a coffee and", "en"));
  assert(!endsHesitant("I want a coffee", "en"));
  for (
    const t of [
      "what time is it",
      "can you hear me now",
      "please book a table for two",
      "my number is 4 5 6",
      "yes",
      "thank you that is all",
      "I want to go home.",
    ]
  ) assert(looksComplete(t, "en"), `"${t}" should look complete`);
  for (const t of ["I would like to check my order", "what about the", "so um", ""]) {
    assert(!looksComplete(t, "en"), `"${t}" should not look complete`);
  }
});

Deno.test("Hindi: Devanagari and romanised backchannels, hesitations and complete turns", () => {
  for (const t of ["हाँ जी", "हां", "अच्छा", "ठीक है", "haan ji", "achha", "theek hai", "hmm", "ho"]) {
    assert(isBackchannel(t, "LANGUAGE_HI"), `"${t}" should be a backchannel`);
  }
  for (const t of ["रुको मेरा एक सवाल है", "ruko mera ek sawaal hai", "nahin"]) {
    assert(!isBackchannel(t, "LANGUAGE_HI"), `"${t}" is not a backchannel`);
  }
  for (const t of ["मुझे एक चाय और", "mujhe ek chai aur", "मैं सोच रहा था कि", "matlab"]) {
    assert(endsHesitant(t, "hi"), `"${t}" should end hesitant`);
  }
  for (const t of ["आप कहाँ हो", "aap kahan ho", "मुझे एक चाय चाहिए", "kya samay hua hai", "नहीं"]) {
    assert(looksComplete(t, "hi"), `"${t}" should look complete`);
  }
});

Deno.test("Tamil: aama and sari are backchannels, anaa trails, a question is complete", () => {
  for (const t of ["ஆமா", "சரி சரி", "ம்ம்", "aama", "sari"]) {
    assert(isBackchannel(t, "LANGUAGE_TA"), `"${t}" should be a backchannel`);
  }
  assert(!isBackchannel("எனக்கு ஒரு கேள்வி", "ta"));
  assert(endsHesitant("நான் வந்தேன் ஆனா", "ta"));
  assert(looksComplete("நீங்க எங்க இருக்கீங்க", "ta"));
});

Deno.test("an unknown language falls back to English", () => {
  assertEquals(languageCode("LANGUAGE_XX"), "en");
  assert(isBackchannel("yeah", "LANGUAGE_XX"));
});
