import { assertEquals } from "../../tests/helpers/assert.ts";
import { applyConfig, changedFields, defaultConfig } from "./call_config.ts";

Deno.test("defaults are English on both legs, Ananya, idle off", () => {
  assertEquals(defaultConfig(), {
    tts: { voice: "VOICE_ANANYA", language: "LANGUAGE_EN" },
    stt: { language: "LANGUAGE_EN" },
    idle: { timeout_ms: 0 },
  });
});

Deno.test("connect config overrides defaults, then the brain's config overrides both", () => {
  const connect = applyConfig(defaultConfig(), {
    tts: { voice: "VOICE_ARJUN" },
    idle: { timeout_ms: 5000 },
  });
  assertEquals(connect.tts.voice, "VOICE_ARJUN");
  assertEquals(connect.idle.timeout_ms, 5000);
  const brain = applyConfig(connect, {
    tts: { language: "LANGUAGE_HI" },
    stt: { language: "LANGUAGE_HI" },
  });
  assertEquals(brain, {
    tts: { voice: "VOICE_ARJUN", language: "LANGUAGE_HI" },
    stt: { language: "LANGUAGE_HI" },
    idle: { timeout_ms: 5000 },
  });
  assertEquals(changedFields(connect, brain), ["tts.language", "stt.language"]);
});

Deno.test("zero values and absent sections keep what is in effect", () => {
  const base = applyConfig(defaultConfig(), { tts: { voice: "VOICE_ARJUN" } });
  const next = applyConfig(base, {
    tts: { voice: "VOICE_UNSPECIFIED", language: "LANGUAGE_UNSPECIFIED" },
    stt: null,
  });
  assertEquals(next, base);
});

Deno.test("a present idle section sets the timeout, an absent one keeps it", () => {
  const on = applyConfig(defaultConfig(), { idle: { timeout_ms: 3000 } });
  assertEquals(applyConfig(on, { idle: { timeout_ms: 0 } }).idle.timeout_ms, 0);
  // proto3 drops a zero scalar: an idle section with no field is the brain saying 0.
  assertEquals(applyConfig(on, { idle: {} }).idle.timeout_ms, 0);
  assertEquals(applyConfig(on, { tts: { voice: "VOICE_ARJUN" } }).idle.timeout_ms, 3000);
});
