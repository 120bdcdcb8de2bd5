// A brain's Config is applied only when the worker's engines serve the result: which fields are
// not served is what the session log's config_refused names.
import { assertEquals } from "../../tests/helpers/assert.ts";
import { LOCAL_SERVES } from "../../common/capabilities.ts";
import { applyConfig, defaultConfig, unservedFields } from "./call_config.ts";

Deno.test("a brain config is refused field by field where the engines do not serve it", () => {
  const hindiSpeech = applyConfig(defaultConfig(), {
    tts: { voice: "VOICE_ARJUN", language: "LANGUAGE_HI" },
  });
  assertEquals(unservedFields(hindiSpeech, LOCAL_SERVES), []);
  const hindiBothLegs = applyConfig(hindiSpeech, { stt: { language: "LANGUAGE_HI" } });
  assertEquals(unservedFields(hindiBothLegs, LOCAL_SERVES), ["stt.language"]);
  const sanskrit = applyConfig(defaultConfig(), { tts: { language: "LANGUAGE_SA" } });
  // Spoken locally through the Hindi voice; a node with English only refuses it.
  assertEquals(unservedFields(sanskrit, LOCAL_SERVES), []);
  assertEquals(
    unservedFields(sanskrit, { LANGUAGE_EN: LOCAL_SERVES.LANGUAGE_EN }),
    ["tts.language"],
  );
  const onlyArjun = { LANGUAGE_EN: { ...LOCAL_SERVES.LANGUAGE_EN, tts: { VOICE_ARJUN: [] } } };
  assertEquals(unservedFields(defaultConfig(), onlyArjun), ["tts.voice"]);
});
