import assert from "node:assert/strict";
import { choiceConfig, defaultChoice, label } from "./voice_choice.ts";

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
