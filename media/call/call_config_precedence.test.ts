import { assertEquals } from "../../tests/helpers/assert.ts";
import { applyConfig, changedFields, defaultConfig } from "./call_config.ts";

const NO_EVENTS = { speech: false, interim_text: false, turn_metrics: false };

Deno.test("defaults are English on both legs, Ananya, idle off, no caller events", () => {
  assertEquals(defaultConfig(), {
    tts: { voice: "VOICE_ANANYA", language: "LANGUAGE_EN" },
    stt: { language: "LANGUAGE_EN" },
    idle: { timeout_ms: 0 },
    events: NO_EVENTS,
    keypad: { sensitive: false },
    turns: { speculative: false },
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
    events: NO_EVENTS,
    keypad: { sensitive: false },
    turns: { speculative: false },
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

Deno.test("a present events section sets every flag, an absent one keeps them", () => {
  const on = applyConfig(defaultConfig(), { events: { speech: true, turn_metrics: true } });
  assertEquals(on.events, { speech: true, interim_text: false, turn_metrics: true });
  assertEquals(changedFields(defaultConfig(), on), ["events.speech", "events.turn_metrics"]);
  assertEquals(applyConfig(on, { tts: { voice: "VOICE_ARJUN" } }).events, on.events);
  // proto3 drops false: an events section with no field turns them all off.
  assertEquals(applyConfig(on, { events: {} }).events, NO_EVENTS);
});

Deno.test("a present keypad section sets sensitive, an absent one keeps it, an empty one clears it", () => {
  const on = applyConfig(defaultConfig(), { keypad: { sensitive: true } });
  assertEquals(on.keypad, { sensitive: true });
  assertEquals(changedFields(defaultConfig(), on), ["keypad.sensitive"]);
  assertEquals(applyConfig(on, { tts: { voice: "VOICE_ARJUN" } }).keypad.sensitive, true);
  assertEquals(applyConfig(on, { keypad: null }).keypad.sensitive, true);
  // proto3 drops false: a keypad section with no field is the brain saying sensitive = false.
  const off = applyConfig(on, { keypad: {} });
  assertEquals(off.keypad.sensitive, false);
  assertEquals(changedFields(on, off), ["keypad.sensitive"]);
});

Deno.test("a present turns section sets speculative, an absent one keeps it, an empty one clears it", () => {
  assertEquals(defaultConfig().turns, { speculative: false });
  // sessions.connect's config, then the brain's Config frames, as keypad does.
  const connect = applyConfig(defaultConfig(), { turns: { speculative: true } });
  assertEquals(connect.turns, { speculative: true });
  assertEquals(changedFields(defaultConfig(), connect), ["turns.speculative"]);
  assertEquals(applyConfig(connect, { keypad: { sensitive: true } }).turns.speculative, true);
  assertEquals(applyConfig(connect, { turns: null }).turns.speculative, true);
  const off = applyConfig(connect, { turns: {} });
  assertEquals(off.turns.speculative, false);
  assertEquals(changedFields(connect, off), ["turns.speculative"]);
});
