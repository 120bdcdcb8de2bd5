// The seven roster languages espeak-ng has no voice for, spoken through a related language's
// voice: audible, of a plausible length, and timed on the text the caller sent (Ol Chiki,
// Devanagari, Bengali or Perso-Arabic offsets), so a heard prefix is a prefix of that text.
import assert from "node:assert/strict";
import { ROSTER_LANGUAGES } from "../../common/capabilities.ts";
import { ESPEAK_CATALOG, ESPEAK_LANGUAGES, ESPEAK_RELATED, EspeakEngine } from "./espeak_engine.ts";
import { RELATED_VOICES, UnspokenScriptError } from "./related_voice.ts";
import { wordSpans } from "./word_timing.ts";
import { collect } from "../../tests/helpers/streams.ts";
import { SynthesisRouter } from "../engines/routing.ts";

/** A sentence per language in its own script, and the script's letters. */
const SAMPLES: Record<string, { text: string; script: RegExp }> = {
  // "Greetings, how can I help you?"
  LANGUAGE_SA: { text: "नमो नमः, अहं भवतः कथं साहाय्यं करोमि?", script: /^[\u0900-\u097F]+$/ },
  LANGUAGE_MAI: { text: "प्रणाम, हम अहाँक कोना मदति क सकैत छी?", script: /^[\u0900-\u097F]+$/ },
  LANGUAGE_DOI: { text: "नमस्कार, मैं तुंदी केह् मदद करी सकनां?", script: /^[\u0900-\u097F]+$/ },
  LANGUAGE_BRX: { text: "खुलुमबाय, आं नोंखौ माबोरै मदद होनो हायो?", script: /^[\u0900-\u097F]+$/ },
  // "Kashmiri is our mother tongue", with Kashmiri's own vowel letters.
  LANGUAGE_KS: {
    text: "آداب، کٲشُر چھُ سٲنۍ مٲجۍ زَبان۔",
    script: /^[\u0600-\u06FF]+$/,
  },
  LANGUAGE_MNI: {
    text: "খুরুমজরি, ঐনা নঙবু করম্না মতেং পাংবা ঙমগনি?",
    script: /^[\u0980-\u09FF]+$/,
  },
  // "Johar, the Santali language is written in Ol Chiki."
  LANGUAGE_SAT: {
    text: "ᱡᱚᱦᱟᱨ, ᱥᱟᱱᱛᱟᱲᱤ ᱯᱟᱹᱨᱥᱤ ᱚᱞ ᱪᱤᱠᱤ ᱛᱮ ᱚᱞᱚᱜ ᱠᱟᱱᱟ᱾",
    script: /^[\u1C5A-\u1C7D]+$/,
  },
};

const rms = (x: Int16Array) => Math.sqrt(x.reduce((s, v) => s + v * v, 0) / Math.max(1, x.length));

Deno.test("related voices, one espeak thread shared by the steps", async (t) => {
  const engine = new EspeakEngine();
  try {
    await engine.ready;

    await t.step("every roster language is served, seven through a related voice", () => {
      assert.deepEqual([...engine.languages].sort(), [...ROSTER_LANGUAGES].sort());
      assert.deepEqual(Object.keys(SAMPLES).sort(), Object.keys(RELATED_VOICES).sort());
      for (const [language, via] of Object.entries(ESPEAK_RELATED)) {
        assert.ok(!Object.hasOwn(ESPEAK_LANGUAGES, language), `${language} has its own voice`);
        // The related voice in the persona's variant: Sanskrit Arjun is Hindi Arjun.
        assert.deepEqual(ESPEAK_CATALOG[language], ESPEAK_CATALOG[via]);
      }
    });

    for (const [language, { text, script }] of Object.entries(SAMPLES)) {
      for (const voice of ["VOICE_ANANYA", "VOICE_ARJUN"]) {
        await t.step(
          `${language} in ${voice}: audible, plausible, timed on the original`,
          async () => {
            const { pcm, words, ms } = await collect(engine.synthesize(text, { voice, language }));
            assert.ok(rms(pcm) > 1000, `${language}: rms ${rms(pcm).toFixed(0)}, silent`);
            // espeak speaks ~60-90 ms per character here; a script read letter by letter (names
            // spelt out) is ~16x longer, one skipped is far shorter.
            const perChar = ms / text.length;
            assert.ok(perChar > 30 && perChar < 200, `${language}: ${perChar.toFixed(0)} ms/char`);
            // Every word of the original is reported, in order, with offsets on the original.
            const spans = wordSpans(text).map((s) => [s.start, s.end]);
            assert.deepEqual(words.map((w) => [w.charStart, w.charEnd]), spans);
            for (let i = 0; i < words.length; i++) {
              const w = words[i];
              assert.equal(w.text, text.slice(w.charStart, w.charEnd));
              assert.match(w.text, script, `${language}: "${w.text}" is not in the sent script`);
              assert.ok(w.startMs <= w.endMs && w.endMs <= ms + 1);
              if (i > 0) assert.ok(words[i - 1].endMs <= w.startMs, `${w.text} overlaps`);
              // The text heard up to this word ends at a word boundary of the original.
              assert.ok(w.charEnd === text.length || /[\s\p{P}]/u.test(text[w.charEnd]));
            }
          },
        );
      }
    }

    await t.step("Meetei Mayek Manipuri is refused, naming the script", () => {
      assert.throws(
        () => engine.synthesize("ꯃꯤꯇꯩ ꯂꯣꯟ", { voice: "VOICE_ANANYA", language: "LANGUAGE_MNI" }),
        (e: unknown) =>
          e instanceof UnspokenScriptError && /Meetei Mayek/.test(e.message) &&
          /Bengali/.test(e.message),
      );
    });

    await t.step("a router with no other engine hands the refusal on", async () => {
      const router = new SynthesisRouter([engine], {});
      const stream = router.synthesize("ꯃꯤꯇꯩ ꯂꯣꯟ", {
        voice: "VOICE_ARJUN",
        language: "LANGUAGE_MNI",
      });
      await assert.rejects(collect(stream), UnspokenScriptError);
    });
  } finally {
    await engine.close();
  }
});
