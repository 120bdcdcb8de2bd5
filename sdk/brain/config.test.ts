// The brain's Config is checked against the proto: protobufjs alone would turn a misspelt enum
// name into 0 ("keep what is in effect") and drop unknown keys without a word.
import assert from "node:assert/strict";
import { ConfigType } from "../../proto/mod.ts";
import { applyConfig, configJson, configMessage } from "./config.ts";

const wire = (m: ReturnType<typeof configMessage>) =>
  ConfigType.toObject(ConfigType.decode(ConfigType.encode(m).finish()), { enums: String });

Deno.test("enum names become their proto numbers on the wire", () => {
  const m = configMessage({
    tts: { voice: "VOICE_ARJUN", language: "LANGUAGE_TA" },
    stt: { language: "LANGUAGE_TA" },
    idle: { timeout_ms: 5000 },
  });
  assert.deepEqual(wire(m), {
    tts: { voice: "VOICE_ARJUN", language: "LANGUAGE_TA" },
    stt: { language: "LANGUAGE_TA" },
    idle: { timeout_ms: 5000 },
  });
});

Deno.test("an unknown enum name throws, naming the field and the known values", () => {
  assert.throws(
    () => configMessage({ tts: { voice: "VOICE_BOGUS" } }),
    /config tts\.voice: unknown Voice "VOICE_BOGUS"; expected one of VOICE_ANANYA, VOICE_ARJUN/,
  );
  assert.throws(() => configMessage({ stt: { language: "LANGUAGE_KLINGON" } }), /stt\.language/);
  assert.throws(() => configMessage({ tts: { voice: 99 as never } }), /unknown Voice 99/);
});

Deno.test("unknown fields, wrong shapes and out-of-range timeouts throw", () => {
  assert.throws(() => configMessage({ tts: { speed: 1.5 } } as never), /tts\.speed: unknown field/);
  assert.throws(() => configMessage({ voice: "VOICE_ARJUN" } as never), /config voice: unknown/);
  assert.throws(() => configMessage({ tts: "VOICE_ARJUN" } as never), /tts: expected an object/);
  assert.throws(() => configMessage({ idle: { timeout_ms: 500 } }), /0 \(idle off\) or 1000/);
  assert.throws(() => configMessage({ idle: { timeout_ms: 1.5 } }), /uint32 integer/);
  assert.throws(() => configMessage({ idle: { timeout_ms: 3_600_001 } }), /out of range/);
});

Deno.test("lowerCamelCase keys and enum numbers are accepted, as proto3 JSON allows", () => {
  const m = configMessage({ tts: { voice: 2 }, idle: { timeoutMs: 0 } } as never);
  assert.deepEqual(configJson(m), { tts: { voice: "VOICE_ARJUN" }, idle: { timeout_ms: 0 } });
  assert.deepEqual(wire(m).idle, {}, "idle off still sends the idle section");
});

Deno.test("the effective config keeps what a zero or absent field leaves alone", () => {
  const base = {
    tts: { voice: "VOICE_ANANYA", language: "LANGUAGE_EN" },
    stt: { language: "LANGUAGE_EN" },
    idle: { timeout_ms: 3000 },
  };
  const next = applyConfig(
    base,
    configJson(configMessage({ tts: { voice: "VOICE_UNSPECIFIED", language: "LANGUAGE_HI" } })),
  );
  assert.deepEqual(next, { ...base, tts: { voice: "VOICE_ANANYA", language: "LANGUAGE_HI" } });
  const off = applyConfig(next, configJson(configMessage({ idle: { timeout_ms: 0 } })));
  assert.equal(off.idle?.timeout_ms, 0, "a present idle section with 0 turns idle off");
  assert.equal(base.tts.language, "LANGUAGE_EN", "the base is not changed");
});

Deno.test("a turns section sets speculative turns on or off; an absent one keeps them", () => {
  const on = applyConfig({}, configJson(configMessage({ turns: { speculative: true } })));
  assert.deepEqual(on, { turns: { speculative: true } });
  const kept = applyConfig(on, configJson(configMessage({ idle: { timeout_ms: 0 } })));
  assert.equal(kept.turns?.speculative, true);
  const off = applyConfig(kept, configJson(configMessage({ turns: {} })));
  assert.equal(off.turns?.speculative, false);
});
