// The noise suppressors a call can ask for in its per-call media configuration
// (agent_input.pipeline.noise_suppression, or config.noise_suppression in the session-flow form).
// Shared by the API (which refuses other names) and the worker (which builds the stage).

export const NOISE_SUPPRESSION = ["off", "rnnoise"] as const;
export type NoiseSuppression = typeof NOISE_SUPPRESSION[number];

/** What a call gets when it does not say (docs/decisions.md: decided by bench/media/noise.ts). */
export const DEFAULT_NOISE_SUPPRESSION: NoiseSuppression = "off";

export function isNoiseSuppression(v: unknown): v is NoiseSuppression {
  return (NOISE_SUPPRESSION as readonly unknown[]).includes(v);
}

/** The suppressor a connect config (signed into the token) asks for, or the default. */
export function noiseSuppressionOf(config: unknown): NoiseSuppression {
  const v = (config as { noise_suppression?: unknown } | null | undefined)?.noise_suppression;
  return isNoiseSuppression(v) ? v : DEFAULT_NOISE_SUPPRESSION;
}
