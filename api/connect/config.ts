// Config as proto3 JSON of voice.v1.Config, read against the reflected message so that the
// .proto stays the one definition. Stricter than protobufjs's fromObject, which silently turns
// an unknown enum name into 0 and drops unknown fields (stack-notes §8).
import protobuf from "protobufjs";
import { ConfigType } from "../../proto/mod.ts";
import {
  callSpeech,
  type Capabilities,
  matrixServes,
  ROSTER_LANGUAGES,
  ROSTER_VOICES,
} from "../../common/capabilities.ts";
import { ApiError, invalidRequest } from "../../common/http/errors.ts";
import type { NoiseSuppression } from "../../common/noise_suppression.ts";
import type { SensitivityLevel } from "../../common/turn_sensitivity.ts";

/** One set field: its canonical path ("tts.voice"), its value, and where the request put it. */
export interface ConfigLeaf {
  key: string;
  value: string | number | boolean;
  path: string;
}

export interface ConfigJson {
  tts?: { voice?: string; language?: string };
  stt?: { language?: string };
  idle?: { timeout_ms?: number };
  /** When an outbound call's greeting is spoken (media/call/greeting_gate.ts). */
  outbound_greeting?: { start?: string; wait_ms?: number };
  /** The caller's keys (media/call/key_presses.ts) and turns (media/turn/speculative.ts). */
  keypad?: { sensitive?: boolean };
  turns?: { speculative?: boolean };
  /** Beside the wire Config, decided at connect (common/noise_suppression.ts). */
  noise_suppression?: NoiseSuppression;
  /** Beside the wire Config too (common/turn_sensitivity.ts); absent: the agent's. */
  interruption_sensitivity?: SensitivityLevel;
  turn_patience?: SensitivityLevel;
}

export const IDLE_MIN_MS = 1000;
export const IDLE_MAX_MS = 3_600_000;

/** The longest an outbound call's greeting may wait (OutboundGreetingConfig.wait_ms). */
export const OUTBOUND_GREETING_MAX_WAIT_MS = 10_000;
const GREETING_STARTS = ["START_UNSPECIFIED", "CALLEE_FIRST", "AFTER_DELAY"];

/** outbound_greeting: a known start and a wait of at most OUTBOUND_GREETING_MAX_WAIT_MS. */
function checkOutboundGreeting(leaves: Map<string, ConfigLeaf>): void {
  const start = leaves.get("outbound_greeting.start");
  if (start && !GREETING_STARTS.includes(start.value as string)) {
    throw new ApiError(
      400,
      "invalid_config",
      `${start.path} must be CALLEE_FIRST or AFTER_DELAY.`,
      { field: start.path, allowed: GREETING_STARTS.slice(1) },
    );
  }
  const wait = leaves.get("outbound_greeting.wait_ms");
  if (wait && +wait.value > OUTBOUND_GREETING_MAX_WAIT_MS) {
    throw new ApiError(
      400,
      "invalid_config",
      `${wait.path} must be at most ${OUTBOUND_GREETING_MAX_WAIT_MS} milliseconds.`,
      { field: wait.path },
    );
  }
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function fieldFor(type: protobuf.Type, key: string): protobuf.Field | undefined {
  return type.fields[key] ?? type.fieldsArray.find((f) => f.jsonName === key);
}

function scalar(field: protobuf.Field, value: unknown, path: string): string | number | boolean {
  if (field.resolvedType instanceof protobuf.Enum) {
    if (typeof value !== "string") {
      throw invalidRequest(path, `${path} must be an enum name given as a string.`);
    }
    return value;
  }
  if (field.type === "uint32") {
    // proto3 JSON allows an integer as a number or as a decimal string.
    const n = typeof value === "string" && /^\d+$/.test(value) ? Number(value) : value;
    if (typeof n !== "number" || !Number.isInteger(n) || n < 0 || n > 0xffff_ffff) {
      throw invalidRequest(path, `${path} must be a non-negative integer.`);
    }
    return n;
  }
  if (field.type === "bool") {
    // A section's flags (keypad.sensitive, turns.speculative): proto3 JSON takes only true/false.
    if (typeof value !== "boolean") throw invalidRequest(path, `${path} must be true or false.`);
    return value;
  }
  throw invalidRequest(path, `${path} has a type this service does not read.`);
}

/**
 * Reads `value` as proto3 JSON of `type`, appending each set leaf. `skip` names keys the caller
 * handles itself (config.record sits beside the sections but is not part of the wire Config).
 */
export function readConfigLeaves(
  value: unknown,
  path: string,
  leaves: ConfigLeaf[],
  type: protobuf.Type = ConfigType,
  prefix = "",
  skip: string[] = [],
): void {
  if (value === null || value === undefined) return;
  if (!isPlainObject(value)) throw invalidRequest(path, `${path} must be an object.`);
  const seen = new Set<string>();
  for (const [key, raw] of Object.entries(value)) {
    if (skip.includes(key)) continue;
    const childPath = `${path}.${key}`;
    const field = fieldFor(type, key);
    if (!field) throw invalidRequest(childPath, `${childPath} is not a known field.`);
    if (seen.has(field.name)) {
      throw invalidRequest(childPath, `${childPath} is given twice (by its two JSON names).`);
    }
    seen.add(field.name);
    if (raw === null) continue; // proto3 JSON: null means the default
    const canonical = prefix ? `${prefix}.${field.name}` : field.name;
    if (canonical === "events") {
      // What the brain is sent beyond its turns is the brain's choice, made with its own Config.
      throw invalidRequest(childPath, `${childPath} is set by the brain (its Config), not here.`);
    }
    if (field.resolvedType instanceof protobuf.Type) {
      readConfigLeaves(raw, childPath, leaves, field.resolvedType, canonical);
    } else {
      leaves.push({ key: canonical, value: scalar(field, raw, childPath), path: childPath });
    }
  }
}

const SERVED: Record<string, "voices" | "tts_languages" | "stt_languages"> = {
  "tts.voice": "voices",
  "tts.language": "tts_languages",
  "stt.language": "stt_languages",
};

/** With no live node, names are checked against the roster; node choice then answers 500. */
const ROSTER: Record<"voices" | "tts_languages" | "stt_languages", string[]> = {
  voices: [...ROSTER_VOICES],
  tts_languages: [...ROSTER_LANGUAGES],
  stt_languages: [...ROSTER_LANGUAGES],
};

/**
 * Checks the merged leaves against what the live nodes serve and the config rules, and builds the
 * nested Config JSON. Zero enum names mean "keep the default" and are dropped. Each name must be
 * served by some live node, and the call's voice and two languages by one node together.
 */
export function checkConfig(leaves: Map<string, ConfigLeaf>, caps: Capabilities): ConfigJson {
  const served: typeof ROSTER = caps.nodes.length ? caps : ROSTER;
  for (const [key, leaf] of [...leaves]) {
    const list = SERVED[key];
    if (!list) continue;
    if (typeof leaf.value === "string" && leaf.value.endsWith("_UNSPECIFIED")) {
      leaves.delete(key);
      continue;
    }
    if (!served[list].includes(leaf.value as string)) {
      throw new ApiError(
        400,
        "unsupported_config",
        `${leaf.path} is ${JSON.stringify(leaf.value)}, which this service does not serve.`,
        { field: leaf.path, allowed: served[list] },
      );
    }
  }
  const tts = leaves.get("tts.language"), stt = leaves.get("stt.language");
  if ((tts === undefined) !== (stt === undefined)) {
    const given = (tts ?? stt)!;
    const missing = given.path.replace(
      /(tts|stt)\.language$/,
      tts ? "stt.language" : "tts.language",
    );
    throw new ApiError(
      400,
      "invalid_config",
      `The two language legs change together: ${given.path} needs ${missing} too.`,
      { field: missing },
    );
  }
  const idle = leaves.get("idle.timeout_ms");
  if (idle && idle.value !== 0 && (+idle.value < IDLE_MIN_MS || +idle.value > IDLE_MAX_MS)) {
    throw new ApiError(
      400,
      "invalid_config",
      `${idle.path} must be 0 (off) or between ${IDLE_MIN_MS} and ${IDLE_MAX_MS} milliseconds.`,
      { field: idle.path },
    );
  }
  checkOutboundGreeting(leaves);
  const out: Record<string, Record<string, unknown>> = {};
  for (const { key, value } of leaves.values()) {
    const [section, name] = key.split(".");
    (out[section] ??= {})[name] = value;
  }
  const speech = callSpeech(out as ConfigJson);
  if (caps.nodes.length && !caps.nodes.some((m) => matrixServes(m, speech))) {
    // Each name is served somewhere, but no one node serves them all.
    const given = ["stt.language", "tts.voice", "tts.language"].map((k) => leaves.get(k))
      .find((l) => l !== undefined);
    throw new ApiError(
      400,
      "unsupported_config",
      `No worker serves ${speech.voice} speaking ${speech.ttsLanguage} while recognising ` +
        `${speech.sttLanguage}; GET /api/v1/capabilities lists what each language is served with.`,
      { field: given?.path ?? "config" },
    );
  }
  return out as ConfigJson;
}
