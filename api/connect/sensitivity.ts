// The connect config's turn sensitivity (common/turn_sensitivity.ts), read beside
// noise_suppression: decided once at connect, never part of the wire Config (the proto is frozen,
// so a brain cannot change it mid-call).
import {
  DEFAULT_SENSITIVITY,
  isSensitivityLevel,
  SENSITIVITY_LEVELS,
  type TurnSensitivity,
} from "../../common/turn_sensitivity.ts";
import { ApiError } from "../../common/http/errors.ts";

export const SENSITIVITY_FIELDS = ["interruption_sensitivity", "turn_patience"] as const;
export type SensitivityField = typeof SENSITIVITY_FIELDS[number];

/** `section.name` if given, checked: one of low, medium, high; anything else is refused. */
export function readLevel(
  section: Record<string, unknown> | undefined,
  path: string,
  name: SensitivityField,
) {
  const v = section?.[name];
  if (v === undefined || v === null) return undefined;
  return checkLevel(v, `${path}.${name}`);
}

export function checkLevel(v: unknown, field: string) {
  if (!isSensitivityLevel(v)) {
    throw new ApiError(
      400,
      "invalid_request",
      `${field} is ${JSON.stringify(v)}; it must be one of ${SENSITIVITY_LEVELS.join(", ")}.`,
      { field, allowed: [...SENSITIVITY_LEVELS] },
    );
  }
  return v;
}

/**
 * The call's input with the agent's levels where its config chose none and the agent's differ
 * from the default (a default agent's sessions keep the config they were given): the worker
 * reads them from the config, as it does noise_suppression.
 */
export function withAgentLevels<T extends { config: object }>(
  input: T,
  agent: Required<TurnSensitivity>,
): T {
  const config: Record<string, unknown> = { ...input.config };
  for (const name of SENSITIVITY_FIELDS) {
    if (config[name] === undefined && agent[name] !== DEFAULT_SENSITIVITY) {
      config[name] = agent[name];
    }
  }
  return { ...input, config };
}
