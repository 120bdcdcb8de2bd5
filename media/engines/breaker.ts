// A provider engine's circuit breaker, as pure logic: events and the time in, the next state out
// (no timers, no I/O; media/engines/engine_health.ts drives it). An engine that refuses our
// credentials, or that cannot be reached several times running, is taken out of routing and out
// of the node's advertised capabilities for a cool-down; then one probe decides whether it is
// back.
//
//   closed ── auth fault, or N connection faults running ──▶ open
//   open ── cool-down over ──▶ half-open (the driver sends one probe)
//   half-open ── probe worked ──▶ closed;  half-open ── probe failed ──▶ open (another cool-down)
//   any ── a real use worked ──▶ closed
//
// A credential refusal opens at once (every later request would be refused the same way); a
// connection failure may be one dropped packet, so only `connectionFailures` in a row open it.
// Failures that are neither (an error frame, a malformed answer) say nothing about whether the
// engine can be reached: they do not move a closed breaker.

import type { EngineFault } from "../providers/base/fault.ts";

/** Why a provider request failed, when it is about reaching the provider at all (said below). */
export type { EngineFault };

export type BreakerStatus = "closed" | "open" | "half-open";

export interface BreakerState {
  readonly status: BreakerStatus;
  /** Connection faults in a row while closed. */
  readonly failures: number;
  /** When it last opened, on the driver's clock (ms); the next probe is a cool-down after. */
  readonly openedAt: number;
  /** Why it is not closed: the failure that opened it, or the last failed probe's. */
  readonly reason: string;
}

export interface BreakerSettings {
  /** How long an open breaker waits before its probe (and between failed probes). */
  coolDownMs: number;
  /** Connection faults in a row that open it. */
  connectionFailures: number;
}

export type BreakerEvent =
  /** A real use or a probe worked. */
  | { type: "succeeded" }
  /** A real use or a probe failed; `fault` says whether reaching the engine was the problem. */
  | { type: "failed"; fault?: EngineFault; reason: string }
  /** Time passed (the driver's timer fired): an open breaker past its cool-down goes half-open. */
  | { type: "time" };

export const DEFAULT_BREAKER: BreakerSettings = { coolDownMs: 30_000, connectionFailures: 3 };

export const CLOSED: BreakerState = { status: "closed", failures: 0, openedAt: 0, reason: "" };

/** Not known yet (before the first probe): out of routing until a probe says. */
export const UNKNOWN: BreakerState = {
  status: "half-open",
  failures: 0,
  openedAt: 0,
  reason: "not probed yet",
};

function open(now: number, reason: string): BreakerState {
  return { status: "open", failures: 0, openedAt: now, reason };
}

export function nextBreakerState(
  s: BreakerState,
  e: BreakerEvent,
  now: number,
  settings: BreakerSettings,
): BreakerState {
  switch (e.type) {
    case "succeeded":
      return s.status === "closed" && s.failures === 0 ? s : CLOSED;
    case "time":
      return s.status === "open" && now - s.openedAt >= settings.coolDownMs
        ? { ...s, status: "half-open" }
        : s;
    case "failed":
      // The probe failed, whatever the fault: another cool-down.
      if (s.status === "half-open") return open(now, e.reason);
      // Already open: late failures of uses begun before it opened do not restart the wait.
      if (s.status === "open") return s;
      if (e.fault === "auth") return open(now, e.reason);
      if (e.fault === "connection") {
        const failures = s.failures + 1;
        return failures >= settings.connectionFailures ? open(now, e.reason) : { ...s, failures };
      }
      return s;
  }
}

/** Whether routing may use the engine: only while closed (half-open is the probe's alone). */
export function breakerUp(s: BreakerState): boolean {
  return s.status === "closed";
}

/** Ms until a "time" event would change `s` (0: now), or undefined when none would. */
export function breakerDueIn(
  s: BreakerState,
  now: number,
  settings: BreakerSettings,
): number | undefined {
  if (s.status !== "open") return undefined;
  return Math.max(0, s.openedAt + settings.coolDownMs - now);
}
