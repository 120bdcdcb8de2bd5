// How readily the bot yields and how patiently it waits: two settings, chosen separately, per
// agent and (beside noise_suppression) per call in the connect config. Shared by the API (which
// refuses other values) and the worker (which turns them into the turn machine's numbers).
//
// interruption_sensitivity: how much of the caller's speech over the bot it takes to stop it.
//   low: the VAD needs 160 ms of speech to hold the bot and speech still going 2 s after its
//   onset cuts it; medium (the default, the issue-13/23 behaviour): 64 ms and 1.2 s; high: 64 ms
//   and 0.6 s, and backchannels ("yeah", "haan") cut the bot too: for agents that must stop at
//   any word.
// turn_patience: how long it waits at the caller's pauses: every end-of-turn window ×0.75 (low),
//   ×1 (medium, the default), ×1.5 (high: callers who think aloud, read out numbers).

export const SENSITIVITY_LEVELS = ["low", "medium", "high"] as const;
export type SensitivityLevel = typeof SENSITIVITY_LEVELS[number];
export const DEFAULT_SENSITIVITY: SensitivityLevel = "medium";

export function isSensitivityLevel(v: unknown): v is SensitivityLevel {
  return (SENSITIVITY_LEVELS as readonly unknown[]).includes(v);
}

export interface Yielding {
  /** The VAD start window while the bot speaks (ms). */
  bargeInMs: number;
  /** Speech over the bot this long after its onset takes the floor (ms). */
  overlapMaxMs: number;
  /** Whether a backchannel over the bot lets it play on. */
  ignoreBackchannels: boolean;
}

export const YIELDING: Readonly<Record<SensitivityLevel, Yielding>> = Object.freeze({
  low: { bargeInMs: 160, overlapMaxMs: 2000, ignoreBackchannels: true },
  medium: { bargeInMs: 64, overlapMaxMs: 1200, ignoreBackchannels: true },
  high: { bargeInMs: 64, overlapMaxMs: 600, ignoreBackchannels: false },
});

/** The factor on every end-of-turn window. */
export const PATIENCE_SCALE: Readonly<Record<SensitivityLevel, number>> = Object.freeze({
  low: 0.75,
  medium: 1,
  high: 1.5,
});

export interface TurnSensitivity {
  interruption_sensitivity?: SensitivityLevel;
  turn_patience?: SensitivityLevel;
}

/** The levels a connect config (signed into the token) asks for, or the defaults. */
export function turnSensitivityOf(config: unknown): Required<TurnSensitivity> {
  const c = config as TurnSensitivity | null | undefined;
  return {
    interruption_sensitivity: isSensitivityLevel(c?.interruption_sensitivity)
      ? c.interruption_sensitivity
      : DEFAULT_SENSITIVITY,
    turn_patience: isSensitivityLevel(c?.turn_patience) ? c.turn_patience : DEFAULT_SENSITIVITY,
  };
}
