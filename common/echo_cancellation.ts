// An agent's echo cancellation (agents.echo_cancellation, issue 35): whether the worker takes the
// bot's own voice out of what a caller's line sends back. Shared by the API (which refuses other
// values) and the worker (which resolves 'auto' by the kind of line).

export const ECHO_CANCELLATION = ["auto", "on", "off"] as const;
export type EchoCancellation = typeof ECHO_CANCELLATION[number];

/** What an agent gets when it does not say: on for phone lines, off for web calls. */
export const DEFAULT_ECHO_CANCELLATION: EchoCancellation = "auto";

export function isEchoCancellation(v: unknown): v is EchoCancellation {
  return (ECHO_CANCELLATION as readonly unknown[]).includes(v);
}

/**
 * Whether a call cancels echo: 'auto' does on a phone line (nothing cancels it there) and not on
 * a web call (the browser's own canceller already did, before Opus). Anything unknown is 'auto'.
 */
export function cancelsEcho(setting: unknown, onPhone: boolean): boolean {
  const s = isEchoCancellation(setting) ? setting : DEFAULT_ECHO_CANCELLATION;
  return s === "on" || (s === "auto" && onPhone);
}
