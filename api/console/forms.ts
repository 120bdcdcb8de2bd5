// Reading the console's url-encoded forms.
import { allowlistOrigin } from "../auth/origin.ts";
import {
  isSensitivityLevel,
  SENSITIVITY_LEVELS,
  type TurnSensitivity,
} from "../../common/turn_sensitivity.ts";
import { SENSITIVITY_FIELDS } from "../connect/sensitivity.ts";
import {
  ECHO_CANCELLATION,
  type EchoCancellation,
  isEchoCancellation,
} from "../../common/echo_cancellation.ts";

export type Form = Record<string, string | File | (string | File)[]>;

/** A text field, trimmed; files and repeated fields read as their first text value. */
export function field(form: Form, name: string): string {
  const v = form[name];
  const first = Array.isArray(v) ? v[0] : v;
  return typeof first === "string" ? first.trim() : "";
}

export const checked = (form: Form, name: string) => field(form, name) === "on";

/**
 * Allowed origins typed one per line (commas and spaces also separate them), held to keys.create's
 * rule (allowlistOrigin).
 */
export function parseOrigins(text: string): { origins: string[] } | { error: string } {
  const origins: string[] = [];
  for (const o of text.split(/[\s,]+/).filter(Boolean)) {
    const n = allowlistOrigin(o);
    if (!n) {
      return { error: `${JSON.stringify(o)} is not an origin (scheme://host[:port], no path).` };
    }
    if (!origins.includes(n)) origins.push(n);
  }
  return { origins };
}

/**
 * The agent's turn sensitivity from its settings form: a level per field given, or the refusal
 * (agents.update's message) if one is not low, medium or high.
 */
export function formLevels(form: Form): TurnSensitivity | string {
  const out: TurnSensitivity = {};
  for (const name of SENSITIVITY_FIELDS) {
    const v = field(form, name);
    if (!v) continue;
    if (!isSensitivityLevel(v)) {
      return `${name} is ${JSON.stringify(v)}; it must be one of ${SENSITIVITY_LEVELS.join(", ")}.`;
    }
    out[name] = v;
  }
  return out;
}

/** The agent form's echo cancellation: absent keeps what is set; other than auto/on/off refused. */
export function echoCancellationField(
  v: string | undefined,
): { value?: EchoCancellation } | { error: string } {
  if (v === undefined) return { value: undefined };
  if (isEchoCancellation(v)) return { value: v };
  return { error: `Echo cancellation must be one of ${ECHO_CANCELLATION.join(", ")}.` };
}
