// The brain's Config, checked against the reflected proto before it goes on the wire.
// protobufjs maps an unknown enum name to 0 and drops unknown keys without a word; a brain that
// misspells a voice would then speak with the old one. Here both are errors.
import protobuf from "protobufjs";
import { ConfigType, enumNames } from "../../proto/mod.ts";

/** A voice name of `voice.v1.Voice`; the proto is the authority, checked at run time. */
export type VoiceName = "VOICE_ANANYA" | "VOICE_ARJUN" | (string & Record<never, never>);

/** A language name of `voice.v1.Language` (English and the 22 scheduled languages of India). */
export type LanguageName =
  | "LANGUAGE_EN"
  | "LANGUAGE_AS"
  | "LANGUAGE_BN"
  | "LANGUAGE_BRX"
  | "LANGUAGE_DOI"
  | "LANGUAGE_GU"
  | "LANGUAGE_HI"
  | "LANGUAGE_KN"
  | "LANGUAGE_KS"
  | "LANGUAGE_KOK"
  | "LANGUAGE_MAI"
  | "LANGUAGE_ML"
  | "LANGUAGE_MNI"
  | "LANGUAGE_MR"
  | "LANGUAGE_NE"
  | "LANGUAGE_OR"
  | "LANGUAGE_PA"
  | "LANGUAGE_SA"
  | "LANGUAGE_SAT"
  | "LANGUAGE_SD"
  | "LANGUAGE_TA"
  | "LANGUAGE_TE"
  | "LANGUAGE_UR"
  | (string & Record<never, never>);

/**
 * A `voice.v1.Config` as proto3 JSON with enum names. Every field is optional: a zero or absent
 * enum keeps what is in effect; a present `idle` section sets the timeout (0 turns idle off), a
 * present `events` section sets its three flags.
 */
export interface ConfigJson {
  tts?: { voice?: VoiceName; language?: LanguageName };
  stt?: { language?: LanguageName };
  idle?: { timeout_ms?: number };
  /**
   * What the brain is told beyond its turns, all off by default: `speech` (`onUserSpeech`),
   * `interim_text` (`onInterimText`), `turn_metrics` (`onTurnMetrics`). A present section sets all
   * three (an absent flag is off).
   */
  events?: { speech?: boolean; interim_text?: boolean; turn_metrics?: boolean };
  /**
   * `sensitive`: the caller's keys are a PIN or account number, written "*" by the worker while it
   * is set (`session.collectDigits({ sensitive: true })` sets and clears it). A present section
   * sets the flag (absent: off).
   */
  keypad?: { sensitive?: boolean };
  /**
   * `speculative`: the worker sends the caller's words as a speculative turn at a short pause, so
   * the reply is ready sooner, and confirms or cancels it once it knows (`turn.speculative`,
   * `turn.confirmed`; docs/brain-guide.md, "Speculative turns"). A present section sets the flag
   * (absent: off).
   */
  turns?: { speculative?: boolean };
}

const IDLE_MIN_MS = 1000;
const IDLE_MAX_MS = 3_600_000;

const INT_RANGE: Record<string, [number, number]> = {
  uint32: [0, 0xffffffff],
  int32: [-0x80000000, 0x7fffffff],
};

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

const camel = (name: string) => name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

function enumValue(e: protobuf.Enum, v: unknown, path: string): number {
  if (typeof v === "string" && Object.hasOwn(e.values, v)) return e.values[v];
  if (typeof v === "number" && Object.hasOwn(e.valuesById, v)) return v;
  throw new Error(
    `config ${path}: unknown ${e.name} ${JSON.stringify(v)}; expected one of ${
      enumNames(e).join(", ")
    }`,
  );
}

function scalarValue(type: string, v: unknown, path: string): unknown {
  if (type === "string" || type === "bool") {
    const ok = type === "bool" ? typeof v === "boolean" : typeof v === "string";
    if (!ok) throw new Error(`config ${path}: expected a ${type}, got ${JSON.stringify(v)}`);
    return v;
  }
  const range = INT_RANGE[type];
  if (!range) throw new Error(`config ${path}: field type ${type} is not supported`);
  if (!Number.isInteger(v) || (v as number) < range[0] || (v as number) > range[1]) {
    throw new Error(`config ${path}: expected a ${type} integer, got ${JSON.stringify(v)}`);
  }
  if (
    path === "idle.timeout_ms" && v !== 0 &&
    ((v as number) < IDLE_MIN_MS || (v as number) > IDLE_MAX_MS)
  ) {
    throw new Error(
      `config ${path}: ${v} is out of range; use 0 (idle off) or ${IDLE_MIN_MS} to ${IDLE_MAX_MS}`,
    );
  }
  return v;
}

// Returns the message in protobufjs' object form (snake_case keys, numeric enums).
function walk(type: protobuf.Type, value: unknown, path: string): Record<string, unknown> {
  if (!isPlainObject(value)) {
    throw new Error(
      `config${path ? " " + path : ""}: expected an object, got ${JSON.stringify(value)}`,
    );
  }
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    // proto3 JSON accepts the proto name and its lowerCamelCase form.
    const field = type.fields[key] ?? type.fieldsArray.find((f) => camel(f.name) === key);
    const here = path ? `${path}.${field?.name ?? key}` : field?.name ?? key;
    if (!field) {
      throw new Error(
        `config ${here}: unknown field; ${type.name} has ${Object.keys(type.fields).join(", ")}`,
      );
    }
    if (v === undefined || v === null) continue; // proto3 JSON: null is the default
    if (field.repeated || field.map) throw new Error(`config ${here}: lists are not supported`);
    const resolved = field.resolve().resolvedType;
    if (resolved instanceof protobuf.Type) out[field.name] = walk(resolved, v, here);
    else if (resolved instanceof protobuf.Enum) out[field.name] = enumValue(resolved, v, here);
    else out[field.name] = scalarValue(field.type, v, here);
  }
  return out;
}

/**
 * Checks a Config given as proto3 JSON with enum names and returns the protobufjs message.
 * Throws an Error naming the field for an unknown enum name, unknown key or bad number.
 */
export function configMessage(config: ConfigJson): protobuf.Message {
  return ConfigType.fromObject(walk(ConfigType, config, ""));
}

/** A Config message as proto3 JSON with enum names, zero fields left out. */
export function configJson(message: protobuf.Message): ConfigJson {
  const json = ConfigType.toObject(message, { enums: String }) as ConfigJson;
  // A present idle section with no field is a timeout of 0 (proto3 drops zero scalars).
  if (json.idle && json.idle.timeout_ms === undefined) json.idle.timeout_ms = 0;
  return json;
}

/**
 * `base` with `patch` applied, as the worker applies it: zero or absent enums keep what is in
 * effect, a present idle or events section sets its fields. Neither argument is changed.
 */
export function applyConfig(base: ConfigJson, patch: ConfigJson): ConfigJson {
  const next: ConfigJson = structuredClone(base);
  const given = (v: string | undefined): v is string => !!v && !v.endsWith("_UNSPECIFIED");
  if (given(patch.tts?.voice)) next.tts = { ...next.tts, voice: patch.tts.voice };
  if (given(patch.tts?.language)) next.tts = { ...next.tts, language: patch.tts.language };
  if (given(patch.stt?.language)) next.stt = { ...next.stt, language: patch.stt.language };
  if (patch.idle) next.idle = { timeout_ms: patch.idle.timeout_ms ?? 0 };
  if (patch.events) {
    const { speech = false, interim_text = false, turn_metrics = false } = patch.events;
    next.events = { speech, interim_text, turn_metrics };
  }
  if (patch.keypad) next.keypad = { sensitive: patch.keypad.sensitive === true };
  if (patch.turns) next.turns = { speculative: patch.turns.speculative === true };
  return next;
}
