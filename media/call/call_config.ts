// The effective config of a call. Three levels, later wins: the service defaults, the config
// the session was created with (signed into the token), then every Config the brain sends.
// Zero values (VOICE_UNSPECIFIED, LANGUAGE_UNSPECIFIED) and absent fields keep what is in
// effect. idle.timeout_ms is a proto3 scalar, so "absent" and 0 look the same on the wire: a
// present idle section sets the timeout (0 turns idle off), an absent one keeps it; likewise the
// events section and its three flags, the keypad section and its sensitive flag, and the turns
// section and its speculative flag.
import { DEFAULT_LANGUAGE, DEFAULT_VOICE, type ServeMatrix } from "../../common/capabilities.ts";

export interface CallConfig {
  tts: { voice: string; language: string };
  stt: { language: string };
  idle: { timeout_ms: number };
  /** What the brain is told beyond its turns (all off unless it asks; media/call/brain_events.ts). */
  events: CallerEvents;
  /** The caller's keys: while `sensitive`, what the worker writes says "*" for each digit. */
  keypad: { sensitive: boolean };
  /** speculative: a pause's words go to the brain before the window closes (turn/speculative.ts). */
  turns: { speculative: boolean };
}

export interface CallerEvents {
  speech: boolean;
  interim_text: boolean;
  turn_metrics: boolean;
}

/** A Config as proto3 JSON with enum names, every field optional. */
export interface ConfigPatch {
  tts?: { voice?: string | null; language?: string | null } | null;
  stt?: { language?: string | null } | null;
  idle?: { timeout_ms?: number | null } | null;
  events?:
    | { speech?: boolean | null; interim_text?: boolean | null; turn_metrics?: boolean | null }
    | null;
  keypad?: { sensitive?: boolean | null } | null;
  turns?: { speculative?: boolean | null } | null;
}

export function defaultConfig(): CallConfig {
  return {
    tts: { voice: DEFAULT_VOICE, language: DEFAULT_LANGUAGE },
    stt: { language: DEFAULT_LANGUAGE },
    idle: { timeout_ms: 0 },
    events: { speech: false, interim_text: false, turn_metrics: false },
    keypad: { sensitive: false },
    turns: { speculative: false },
  };
}

const given = (v: string | null | undefined): v is string =>
  typeof v === "string" && v !== "" && !v.endsWith("_UNSPECIFIED");

/** `base` with `patch` applied; `base` is not changed. */
export function applyConfig(base: CallConfig, patch: ConfigPatch | null | undefined): CallConfig {
  const next: CallConfig = structuredClone(base);
  if (!patch) return next;
  if (given(patch.tts?.voice)) next.tts.voice = patch.tts.voice;
  if (given(patch.tts?.language)) next.tts.language = patch.tts.language;
  if (given(patch.stt?.language)) next.stt.language = patch.stt.language;
  if (patch.idle) {
    const ms = Number(patch.idle.timeout_ms ?? 0);
    if (Number.isFinite(ms) && ms >= 0) next.idle.timeout_ms = ms;
  }
  // Like idle: a present section sets every flag (proto3 cannot tell false from absent).
  const e = patch.events;
  if (e) {
    next.events = {
      speech: !!e.speech,
      interim_text: !!e.interim_text,
      turn_metrics: !!e.turn_metrics,
    };
  }
  // Like events: a present keypad section sets its flag (proto3 drops false), an absent one keeps.
  if (patch.keypad) next.keypad = { sensitive: !!patch.keypad.sensitive };
  if (patch.turns) next.turns = { speculative: !!patch.turns.speculative };
  return next;
}

/** What differs between two configs, as dotted field names (for logs and live switching). */
export function changedFields(a: CallConfig, b: CallConfig): string[] {
  const out: string[] = [];
  if (a.tts.voice !== b.tts.voice) out.push("tts.voice");
  if (a.tts.language !== b.tts.language) out.push("tts.language");
  if (a.stt.language !== b.stt.language) out.push("stt.language");
  if (a.idle.timeout_ms !== b.idle.timeout_ms) out.push("idle.timeout_ms");
  for (const k of ["speech", "interim_text", "turn_metrics"] as const) {
    if (a.events[k] !== b.events[k]) out.push(`events.${k}`);
  }
  if (a.keypad.sensitive !== b.keypad.sensitive) out.push("keypad.sensitive");
  if (a.turns.speculative !== b.turns.speculative) out.push("turns.speculative");
  return out;
}

/** The fields of `config` that the worker's engines do not serve (none: it can be applied). */
export function unservedFields(config: CallConfig, serves: ServeMatrix): string[] {
  const refused: string[] = [];
  const tts = serves[config.tts.language]?.tts;
  if (!tts) refused.push("tts.language");
  else if (!tts[config.tts.voice]?.length) refused.push("tts.voice");
  if (!serves[config.stt.language]?.stt?.length) refused.push("stt.language");
  return refused;
}

/**
 * A brain's Config patch on the config in effect: applied when the engines serve the result,
 * refused (naming the fields they do not) otherwise. `kind` and `detail` are the session log's.
 */
export function reconfigure(
  config: CallConfig,
  patch: ConfigPatch,
  serves: ServeMatrix,
):
  | { kind: "config_refused"; detail: { fields: string[]; config: ConfigPatch } }
  | { kind: "config_applied"; detail: { changed: string[]; config: CallConfig } } {
  const next = applyConfig(config, patch);
  const refused = unservedFields(next, serves);
  if (refused.length) return { kind: "config_refused", detail: { fields: refused, config: patch } };
  return { kind: "config_applied", detail: { changed: changedFields(config, next), config: next } };
}
