import assert from "node:assert/strict";
import { ROSTER_LANGUAGES } from "../../common/capabilities.ts";
import {
  choiceConfig,
  defaultChoice,
  label,
  pickerOptions,
  settleChoice,
  voicesIn,
} from "./voice_choice.ts";

const caps = {
  voices: ["VOICE_ANANYA", "VOICE_ARJUN"],
  tts_languages: ["LANGUAGE_EN", "LANGUAGE_HI"],
  stt_languages: ["LANGUAGE_EN"],
};

Deno.test("the preselected choice is the deployment's defaults when it offers them", () => {
  assert.deepEqual(
    defaultChoice({ ...caps, defaults: { voice: "VOICE_ARJUN", language: "LANGUAGE_HI" } }),
    { voice: "VOICE_ARJUN", ttsLanguage: "LANGUAGE_HI", sttLanguage: "LANGUAGE_EN" },
  );
  assert.deepEqual(defaultChoice(caps), {
    voice: "VOICE_ANANYA",
    ttsLanguage: "LANGUAGE_EN",
    sttLanguage: "LANGUAGE_EN",
  });
});

Deno.test("a choice becomes a config with both language legs", () => {
  assert.deepEqual(
    choiceConfig({ voice: "VOICE_ARJUN", ttsLanguage: "LANGUAGE_HI", sttLanguage: "LANGUAGE_EN" }),
    { tts: { voice: "VOICE_ARJUN", language: "LANGUAGE_HI" }, stt: { language: "LANGUAGE_EN" } },
  );
});

Deno.test("enum names get readable labels; unknown ones stay as they are", () => {
  assert.deepEqual(
    ["LANGUAGE_HI", "LANGUAGE_XX", "VOICE_ANANYA", "other"].map(label),
    ["Hindi", "XX", "Ananya", "other"],
  );
});

Deno.test("every roster language has a readable name", () => {
  for (const l of ROSTER_LANGUAGES) assert.notEqual(label(l), l.slice("LANGUAGE_".length), l);
  assert.equal(label("LANGUAGE_BRX"), "Bodo");
  assert.equal(label("LANGUAGE_SAT"), "Santali");
});

// A deployment where Hindi is spoken by a provider in Ananya only (with a local fallback) and
// by espeak-ng in Arjun, Tamil only in Arjun, and Hindi heard by a provider but Tamil not at all.
const provider = (engine: string) => ({ engine, kind: "provider" as const });
const local = (engine: string) => ({ engine, kind: "local" as const });
const matrix = {
  voices: ["VOICE_ANANYA", "VOICE_ARJUN"],
  tts_languages: ["LANGUAGE_EN", "LANGUAGE_HI", "LANGUAGE_TA"],
  stt_languages: ["LANGUAGE_EN", "LANGUAGE_HI"],
  defaults: { voice: "VOICE_ANANYA", language: "LANGUAGE_EN" },
  languages: {
    LANGUAGE_EN: {
      stt: [local("pocketsphinx")],
      tts: { VOICE_ANANYA: [local("espeak-ng")], VOICE_ARJUN: [local("espeak-ng")] },
    },
    LANGUAGE_HI: {
      stt: [provider("sarvam-saaras")],
      tts: {
        VOICE_ANANYA: [provider("sarvam-bulbul"), local("espeak-ng")],
        VOICE_ARJUN: [local("espeak-ng")],
      },
    },
    LANGUAGE_TA: { tts: { VOICE_ARJUN: [local("espeak-ng")] } },
  },
};
const values = (options: { value: string }[]) => options.map((o) => o.value);
const labels = (options: { label: string }[]) => options.map((o) => o.label);

Deno.test("with the matrix, the voice picker offers the personas of the speaking language", () => {
  const choice = defaultChoice(matrix);
  assert.deepEqual(choice, {
    voice: "VOICE_ANANYA",
    ttsLanguage: "LANGUAGE_EN",
    sttLanguage: "LANGUAGE_EN",
  });
  assert.deepEqual(values(pickerOptions(matrix, choice).voice), ["VOICE_ANANYA", "VOICE_ARJUN"]);
  const tamil = { ...choice, ttsLanguage: "LANGUAGE_TA" };
  assert.deepEqual(voicesIn(matrix, "LANGUAGE_TA"), ["VOICE_ARJUN"]);
  assert.deepEqual(labels(pickerOptions(matrix, tamil).voice), ["Arjun"]);
});

Deno.test("language pickers name the language and the engine that serves it, with its kind", () => {
  const options = pickerOptions(matrix, defaultChoice(matrix));
  assert.deepEqual(values(options.tts), matrix.tts_languages);
  assert.deepEqual(labels(options.tts), [
    "English — espeak-ng (local)",
    "Hindi — sarvam-bulbul (provider)", // Ananya's first engine, not its fallback
    "Tamil — espeak-ng (local)", // Ananya is not spoken there: Arjun's engine
  ]);
  assert.deepEqual(labels(options.stt), [
    "English — pocketsphinx (local)",
    "Hindi — sarvam-saaras (provider)",
  ]);
  // With Arjun chosen, Hindi is labelled with the engine that speaks it in Arjun.
  const arjun = pickerOptions(matrix, { ...defaultChoice(matrix), voice: "VOICE_ARJUN" });
  assert.equal(arjun.tts[1].label, "Hindi — espeak-ng (local)");
});

Deno.test("a speaking language without the chosen voice moves the voice; the rest is kept", () => {
  const settled = settleChoice(matrix, {
    voice: "VOICE_ANANYA",
    ttsLanguage: "LANGUAGE_TA",
    sttLanguage: "LANGUAGE_HI",
  });
  assert.deepEqual(settled, {
    voice: "VOICE_ARJUN",
    ttsLanguage: "LANGUAGE_TA",
    sttLanguage: "LANGUAGE_HI",
  });
  // Back in Hindi, Arjun is spoken there too and stays.
  assert.equal(
    settleChoice(matrix, { ...settled, ttsLanguage: "LANGUAGE_HI" }).voice,
    "VOICE_ARJUN",
  );
  // Names no longer offered fall back to the defaults.
  assert.deepEqual(
    settleChoice(matrix, {
      voice: "VOICE_X",
      ttsLanguage: "LANGUAGE_XX",
      sttLanguage: "LANGUAGE_TA",
    }),
    defaultChoice(matrix),
  );
});

Deno.test("the default voice is moved when the default speaking language lacks it", () => {
  const caps = { ...matrix, defaults: { voice: "VOICE_ANANYA", language: "LANGUAGE_TA" } };
  assert.deepEqual(defaultChoice(caps), {
    voice: "VOICE_ARJUN",
    ttsLanguage: "LANGUAGE_TA",
    sttLanguage: "LANGUAGE_EN", // Tamil is not heard: the first heard language
  });
});

Deno.test("an API without the matrix gets the flat lists, unlinked and labelled by name", () => {
  const options = pickerOptions(caps, defaultChoice(caps));
  assert.deepEqual(values(options.voice), caps.voices);
  assert.deepEqual(labels(options.tts), ["English", "Hindi"]);
  assert.deepEqual(labels(options.stt), ["English"]);
  // Every voice in every language, as before the matrix.
  assert.deepEqual(
    settleChoice(caps, {
      voice: "VOICE_ARJUN",
      ttsLanguage: "LANGUAGE_HI",
      sttLanguage: "LANGUAGE_EN",
    }),
    { voice: "VOICE_ARJUN", ttsLanguage: "LANGUAGE_HI", sttLanguage: "LANGUAGE_EN" },
  );
});
