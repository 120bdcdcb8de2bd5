// The connect body, read without HTTP: both forms, their conflicts, config as proto3 JSON,
// and every bound.
import { withAgentLevels } from "./sensitivity.ts";
import { assertEquals, assertThrows } from "../../tests/helpers/assert.ts";
import { LOCAL_ENGINES } from "../../common/capabilities.ts";
import { ApiError } from "../../common/http/errors.ts";
import { LIMITS, parseConnectBody } from "./parse.ts";

const parse = (body: unknown) => parseConnectBody(body, LOCAL_ENGINES);

function refused(body: unknown, code: string, details: Record<string, unknown> = {}) {
  const err = assertThrows(() => parse(body), ApiError);
  assertEquals(err.code, code, err.message);
  for (const [k, v] of Object.entries(details)) assertEquals(err.details[k], v, k);
  return err;
}

Deno.test("only agent_id gives English on both legs by default (empty config)", () => {
  const r = parse({ agent_id: "ag_1" });
  assertEquals(r.agent_id, "ag_1");
  assertEquals(r.input, { init: null, config: {}, record: null, display_name: null, metadata: {} });
});

Deno.test("form A and form B normalize to the same input", () => {
  const a = parse({
    agent_id: "ag_1",
    agent_input: {
      payload: { order: "42" },
      pipeline: { tts: { voice: "VOICE_ARJUN" }, idle: { timeout_ms: 5000 } },
    },
    record: false,
  });
  const b = parse({
    agent_id: "ag_1",
    init: { order: "42" },
    config: { tts: { voice: "VOICE_ARJUN" }, idle: { timeout_ms: 5000 }, record: false },
  });
  assertEquals(a, b);
  assertEquals(a.input.config, { tts: { voice: "VOICE_ARJUN" }, idle: { timeout_ms: 5000 } });
  assertEquals(a.input.record, false);
});

Deno.test("the forms may be mixed and agree", () => {
  const r = parse({
    agent_id: "ag_1",
    agent_input: { payload: { a: 1, b: [1, 2] }, pipeline: { tts: { voice: "VOICE_ARJUN" } } },
    init: { b: [1, 2], a: 1 },
    config: { idle: { timeout_ms: 0 } },
    record: true,
    display_name: "Order 42",
    metadata: { order: "42" },
  });
  assertEquals(r.input.init, { a: 1, b: [1, 2] });
  assertEquals(r.input.config, { tts: { voice: "VOICE_ARJUN" }, idle: { timeout_ms: 0 } });
  assertEquals(r.input.record, true);
});

Deno.test("conflicting init and payload name both paths", () => {
  refused(
    { agent_id: "a", agent_input: { payload: { x: 1 } }, init: { x: 2 } },
    "conflicting_fields",
    {
      fields: ["agent_input.payload", "init"],
    },
  );
});

Deno.test("conflicting record and config.record name both paths", () => {
  refused({ agent_id: "a", record: true, config: { record: false } }, "conflicting_fields", {
    fields: ["record", "config.record"],
  });
});

Deno.test("conflicting pipeline and config leaves name both paths", () => {
  refused(
    {
      agent_id: "a",
      agent_input: { pipeline: { tts: { voice: "VOICE_ARJUN" } } },
      config: { tts: { voice: "VOICE_ANANYA" } },
    },
    "conflicting_fields",
    { fields: ["agent_input.pipeline.tts.voice", "config.tts.voice"] },
  );
});

Deno.test("body that is not an object, and missing agent_id, are invalid_request", () => {
  refused([], "invalid_request", { field: "" });
  refused("x", "invalid_request", { field: "" });
  refused({}, "invalid_request", { field: "agent_id" });
  refused({ agent_id: 5 }, "invalid_request", { field: "agent_id" });
  refused({ agent_id: "" }, "invalid_request", { field: "agent_id" });
});

Deno.test("unknown fields are refused with their dotted path", () => {
  refused({ agent_id: "a", nope: 1 }, "invalid_request", { field: "nope" });
  refused({ agent_id: "a", agent_input: { extra: {} } }, "invalid_request", {
    field: "agent_input.extra",
  });
  refused({ agent_id: "a", config: { vad: {} } }, "invalid_request", { field: "config.vad" });
  refused({ agent_id: "a", config: { tts: { speed: 2 } } }, "invalid_request", {
    field: "config.tts.speed",
  });
  refused({ agent_id: "a", agent_input: { pipeline: { record: true } } }, "invalid_request", {
    field: "agent_input.pipeline.record",
  });
});

Deno.test("wrong JSON types are invalid_request with the field", () => {
  refused({ agent_id: "a", record: "yes" }, "invalid_request", { field: "record" });
  refused({ agent_id: "a", config: [] }, "invalid_request", { field: "config" });
  refused({ agent_id: "a", config: { tts: "VOICE_ARJUN" } }, "invalid_request", {
    field: "config.tts",
  });
  refused({ agent_id: "a", config: { tts: { voice: 1 } } }, "invalid_request", {
    field: "config.tts.voice",
  });
  refused({ agent_id: "a", config: { idle: { timeout_ms: 1.5 } } }, "invalid_request", {
    field: "config.idle.timeout_ms",
  });
  refused({ agent_id: "a", init: [1] }, "invalid_request", { field: "init" });
  refused({ agent_id: "a", display_name: 3 }, "invalid_request", { field: "display_name" });
  refused({ agent_id: "a", metadata: "x" }, "invalid_request", { field: "metadata" });
});

Deno.test("config accepts the proto3 JSON name of a field and refuses it twice", () => {
  assertEquals(parse({ agent_id: "a", config: { idle: { timeoutMs: 2000 } } }).input.config, {
    idle: { timeout_ms: 2000 },
  });
  assertEquals(parse({ agent_id: "a", config: { idle: { timeout_ms: "2000" } } }).input.config, {
    idle: { timeout_ms: 2000 },
  });
  refused(
    { agent_id: "a", config: { idle: { timeoutMs: 2000, timeout_ms: 2000 } } },
    "invalid_request",
    {
      field: "config.idle.timeout_ms",
    },
  );
});

Deno.test("an enum name protobufjs would silently zero is refused with field and allowed", () => {
  refused({ agent_id: "a", config: { tts: { voice: "VOICE_BOGUS" } } }, "unsupported_config", {
    field: "config.tts.voice",
    allowed: LOCAL_ENGINES.voices,
  });
});

Deno.test("a real language name the engines do not serve is unsupported_config", () => {
  // Hindi is in the enum and espeak-ng speaks it, but the local recogniser is English only.
  refused(
    {
      agent_id: "a",
      config: { tts: { language: "LANGUAGE_HI" }, stt: { language: "LANGUAGE_HI" } },
    },
    "unsupported_config",
    { field: "config.stt.language", allowed: ["LANGUAGE_EN"] },
  );
  // Sanskrit is spoken locally (through the Hindi voice) but not heard.
  refused(
    {
      agent_id: "a",
      config: { tts: { language: "LANGUAGE_EN" }, stt: { language: "LANGUAGE_SA" } },
    },
    "unsupported_config",
    { field: "config.stt.language" },
  );
});

Deno.test("the language legs change together", () => {
  refused({ agent_id: "a", config: { tts: { language: "LANGUAGE_EN" } } }, "invalid_config", {
    field: "config.stt.language",
  });
  refused(
    { agent_id: "a", agent_input: { pipeline: { stt: { language: "LANGUAGE_EN" } } } },
    "invalid_config",
    { field: "agent_input.pipeline.tts.language" },
  );
  const both = parse({
    agent_id: "a",
    config: { tts: { language: "LANGUAGE_EN" }, stt: { language: "LANGUAGE_EN" } },
  });
  assertEquals(both.input.config, {
    tts: { language: "LANGUAGE_EN" },
    stt: { language: "LANGUAGE_EN" },
  });
});

Deno.test("zero enum names mean keep the default", () => {
  const r = parse({ agent_id: "a", config: { tts: { voice: "VOICE_UNSPECIFIED" } } });
  assertEquals(r.input.config, {});
});

Deno.test("idle.timeout_ms is 0 or 1000..3600000", () => {
  for (const ok of [0, 1000, 3_600_000]) {
    assertEquals(parse({ agent_id: "a", config: { idle: { timeout_ms: ok } } }).input.config, {
      idle: { timeout_ms: ok },
    });
  }
  for (const bad of [1, 999, 3_600_001]) {
    refused({ agent_id: "a", config: { idle: { timeout_ms: bad } } }, "invalid_config", {
      field: "config.idle.timeout_ms",
    });
  }
});

Deno.test("display_name is at most 200 characters", () => {
  parse({ agent_id: "a", display_name: "é".repeat(LIMITS.displayNameChars) });
  refused({ agent_id: "a", display_name: "x".repeat(201) }, "invalid_metadata", {
    field: "display_name",
  });
});

Deno.test("metadata: at most 10 keys, key shape, string values of at most 256 chars", () => {
  const ten = Object.fromEntries([...Array(10)].map((_, i) => [`k${i}`, "v"]));
  parse({ agent_id: "a", metadata: ten });
  refused({ agent_id: "a", metadata: { ...ten, k10: "v" } }, "invalid_metadata", {
    field: "metadata",
  });
  refused({ agent_id: "a", metadata: { "bad key": "v" } }, "invalid_metadata", {
    field: "metadata.bad key",
  });
  refused({ agent_id: "a", metadata: { ["k".repeat(65)]: "v" } }, "invalid_metadata");
  refused({ agent_id: "a", metadata: { n: 1 } }, "invalid_metadata", { field: "metadata.n" });
  refused({ agent_id: "a", metadata: { n: { deep: "x" } } }, "invalid_metadata", {
    field: "metadata.n",
  });
  parse({ agent_id: "a", metadata: { v: "😀".repeat(256) } }); // code points, not UTF-16 units
  refused({ agent_id: "a", metadata: { v: "x".repeat(257) } }, "invalid_metadata", {
    field: "metadata.v",
  });
});

Deno.test("init is at most 16 KiB serialized", () => {
  const fits = { s: "x".repeat(LIMITS.initBytes - 8) }; // {"s":"..."} is 8 bytes of framing
  assertEquals(JSON.stringify(fits).length, LIMITS.initBytes);
  parse({ agent_id: "a", init: fits });
  refused({ agent_id: "a", init: { s: "x".repeat(LIMITS.initBytes) } }, "init_too_large");
  refused(
    { agent_id: "a", agent_input: { payload: { s: "x".repeat(LIMITS.initBytes) } } },
    "init_too_large",
    { field: "agent_input.payload" },
  );
});

Deno.test("noise suppression is chosen per call in either form and kept with the config", () => {
  const a = parse({ agent_id: "a", agent_input: { pipeline: { noise_suppression: "rnnoise" } } });
  assertEquals(a.input.config, { noise_suppression: "rnnoise" });
  const b = parse({ agent_id: "a", config: { noise_suppression: "off", idle: { timeout_ms: 0 } } });
  assertEquals(b.input.config, { noise_suppression: "off", idle: { timeout_ms: 0 } });
  assertEquals(parse({ agent_id: "a" }).input.config.noise_suppression, undefined);
});

Deno.test("an unknown noise suppressor is unsupported_config naming the field and the served ones", () => {
  refused(
    { agent_id: "a", agent_input: { pipeline: { noise_suppression: "krisp" } } },
    "unsupported_config",
    { field: "agent_input.pipeline.noise_suppression", allowed: ["off", "rnnoise"] },
  );
  refused({ agent_id: "a", config: { noise_suppression: true } }, "invalid_request", {
    field: "config.noise_suppression",
  });
  refused(
    {
      agent_id: "a",
      agent_input: { pipeline: { noise_suppression: "rnnoise" } },
      config: { noise_suppression: "off" },
    },
    "conflicting_fields",
    { fields: ["agent_input.pipeline.noise_suppression", "config.noise_suppression"] },
  );
});

Deno.test("config.events is the brain's to set: a connect request naming it is refused", () => {
  refused({ agent_id: "a", config: { events: { speech: true } } }, "invalid_request", {
    field: "config.events",
  });
});

Deno.test("turn sensitivity is chosen per call beside the config, and other values are refused", () => {
  const a = parse({
    agent_id: "a",
    agent_input: { pipeline: { interruption_sensitivity: "low", turn_patience: "high" } },
  });
  assertEquals(a.input.config, { interruption_sensitivity: "low", turn_patience: "high" });
  const b = parse({ agent_id: "a", config: { turn_patience: "medium" } });
  assertEquals(b.input.config, { turn_patience: "medium" });
  refused({ agent_id: "a", config: { interruption_sensitivity: "max" } }, "invalid_request", {
    field: "config.interruption_sensitivity",
    allowed: ["low", "medium", "high"],
  });
  refused(
    { agent_id: "a", agent_input: { pipeline: { turn_patience: 2 } } },
    "invalid_request",
    { field: "agent_input.pipeline.turn_patience", allowed: ["low", "medium", "high"] },
  );
  refused(
    {
      agent_id: "a",
      agent_input: { pipeline: { turn_patience: "low" } },
      config: { turn_patience: "high" },
    },
    "conflicting_fields",
    { fields: ["agent_input.pipeline.turn_patience", "config.turn_patience"] },
  );
});

Deno.test("the agent's turn sensitivity fills a call's config only where it chose none", () => {
  const agent = { interruption_sensitivity: "low", turn_patience: "medium" } as const;
  const own = parse({ agent_id: "a", config: { interruption_sensitivity: "high" } }).input;
  assertEquals(withAgentLevels(own, agent).config, { interruption_sensitivity: "high" });
  const none = parse({ agent_id: "a" }).input;
  assertEquals(withAgentLevels(none, agent).config, { interruption_sensitivity: "low" });
});

Deno.test("turns.speculative and keypad.sensitive are taken as true or false, in either form", () => {
  const on = parse({ agent_id: "a", config: { turns: { speculative: true } } });
  assertEquals(on.input.config, { turns: { speculative: true } });
  const both = parse({
    agent_id: "a",
    agent_input: { pipeline: { turns: { speculative: false } } },
    config: { keypad: { sensitive: true } },
  });
  assertEquals(both.input.config, { turns: { speculative: false }, keypad: { sensitive: true } });
  refused({ agent_id: "a", config: { turns: { speculative: "yes" } } }, "invalid_request", {
    field: "config.turns.speculative",
  });
  refused({ agent_id: "a", config: { turns: { speculative: 1 } } }, "invalid_request", {
    field: "config.turns.speculative",
  });
  refused({ agent_id: "a", config: { turns: { eager: true } } }, "invalid_request", {
    field: "config.turns.eager",
  });
  refused(
    {
      agent_id: "a",
      agent_input: { pipeline: { turns: { speculative: true } } },
      config: { turns: { speculative: false } },
    },
    "conflicting_fields",
  );
});
