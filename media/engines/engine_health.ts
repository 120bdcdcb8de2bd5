// Whether each provider engine of a worker is up: one breaker (breaker.ts) per engine that has a
// probe, fed by the routers (a use that worked, a use that failed with its fault) and by its own
// probes, on a timer. Routing skips an engine that is not up; the node advertises only what its
// up engines serve (start.ts's `serves`, re-registered on every change); the metrics read the
// states. Local engines have no probe and no breaker: they are always up (a crashed thread is
// replaced by the engine itself).
//
// Provider engines start unknown and out of routing: `start()` probes them all once, before the
// node registers, so a key that is refused is known before the first call, not at its greeting.
//
// Logged once per change that matters: down (with the failure), up again, and a probe that fails
// for a new reason. The probe cycle of an engine that stays down is counted in the metrics, not
// logged every cool-down.
import { logger } from "../../common/log.ts";
import {
  breakerDueIn,
  type BreakerEvent,
  type BreakerSettings,
  type BreakerState,
  type BreakerStatus,
  breakerUp,
  DEFAULT_BREAKER,
  type EngineFault,
  nextBreakerState,
  UNKNOWN,
} from "./breaker.ts";

const log = logger("engines");

/** What the health of an engine needs of it. */
export interface WatchedEngine {
  name: string;
  leg: "recognition" | "synthesis";
  /** The provider's cheapest authenticated request; without one, no breaker. */
  probe?: () => Promise<void>;
}

/** One engine's breaker as the metrics read it. */
export interface EngineBreakerView {
  engine: string;
  leg: "recognition" | "synthesis";
  up: boolean;
  status: BreakerStatus;
  /** Transitions so far, by the state entered. */
  transitions: Record<BreakerStatus, number>;
}

/** What the routers tell and ask (a router without one treats every engine as up). */
export interface EngineOutcomes {
  up(engine: string): boolean;
  succeeded(engine: string): void;
  failed(engine: string, err: unknown): void;
}

interface Entry {
  engine: WatchedEngine;
  state: BreakerState;
  transitions: Record<BreakerStatus, number>;
  timer?: ReturnType<typeof setTimeout>;
  probing?: Promise<void>;
}

/** A probe that has not answered in this long has failed (the engines' own timeouts are 5 s). */
export const PROBE_TIMEOUT_MS = 10_000;

export class EngineHealth implements EngineOutcomes {
  #entries = new Map<string, Entry>();
  #listeners: (() => void)[] = [];
  #closed = false;

  constructor(
    engines: readonly WatchedEngine[],
    readonly settings: BreakerSettings = DEFAULT_BREAKER,
    private clock: () => number = () => performance.now(),
  ) {
    for (const engine of engines) {
      if (!engine.probe) continue;
      this.#entries.set(engine.name, {
        engine,
        state: UNKNOWN,
        transitions: { closed: 0, open: 0, "half-open": 0 },
      });
    }
  }

  /** The first probe of every provider engine; resolves once each has answered or timed out. */
  async start(): Promise<void> {
    await Promise.all([...this.#entries.values()].map((e) => this.#probe(e)));
  }

  /** Whether routing may use `engine` (an engine without a breaker always). */
  up(engine: string): boolean {
    const e = this.#entries.get(engine);
    return !e || breakerUp(e.state);
  }

  succeeded(engine: string): void {
    this.#apply(engine, { type: "succeeded" });
  }

  failed(engine: string, err: unknown): void {
    const fault = (err as { fault?: EngineFault } | undefined)?.fault;
    const reason = err instanceof Error ? err.message : String(err);
    this.#apply(engine, { type: "failed", fault, reason });
  }

  /** `cb` runs after any engine goes down or comes up (the node re-advertises what it serves). */
  onChange(cb: () => void): void {
    this.#listeners.push(cb);
  }

  breakers(): EngineBreakerView[] {
    return [...this.#entries.values()].map((e) => ({
      engine: e.engine.name,
      leg: e.engine.leg,
      up: breakerUp(e.state),
      status: e.state.status,
      transitions: { ...e.transitions },
    }));
  }

  /** Stops the probe timers; probes in flight are left to end, their answers ignored. */
  close(): void {
    this.#closed = true;
    for (const e of this.#entries.values()) clearTimeout(e.timer);
  }

  #apply(engine: string, event: BreakerEvent): void {
    const e = this.#entries.get(engine);
    if (!e || this.#closed) return;
    const from = e.state;
    const to = nextBreakerState(from, event, this.clock(), this.settings);
    e.state = to;
    if (to.status !== from.status) {
      e.transitions[to.status]++;
      this.#say(e, from, to);
      clearTimeout(e.timer);
      e.timer = undefined;
    }
    // Open: wake when the cool-down is over (again, if a timer fired a little early).
    if (to.status === "open" && !e.timer) {
      const wait = breakerDueIn(to, this.clock(), this.settings) ?? 0;
      e.timer = setTimeout(() => {
        e.timer = undefined;
        this.#apply(engine, { type: "time" });
      }, Math.max(1, wait));
    }
    if (to.status === from.status) return;
    if (to.status === "half-open") void this.#probe(e);
    if (breakerUp(from) !== breakerUp(to)) {
      for (const cb of this.#listeners) cb();
    }
  }

  /** One probe, its answer fed to the breaker. */
  #probe(e: Entry): Promise<void> {
    if (e.probing) return e.probing;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            Object.assign(new Error(`the probe did not answer in ${PROBE_TIMEOUT_MS} ms`), {
              fault: "connection",
            }),
          ),
        PROBE_TIMEOUT_MS,
      );
    });
    e.probing = Promise.race([e.engine.probe!(), timeout]).then(
      () => this.succeeded(e.engine.name),
      (err) => this.failed(e.engine.name, err),
    ).finally(() => {
      clearTimeout(timer);
      e.probing = undefined;
    });
    return e.probing;
  }

  #say(e: Entry, from: BreakerState, to: BreakerState): void {
    const fields = { engine: e.engine.name, leg: e.engine.leg };
    if (to.status === "closed") return log.info("speech engine up", fields);
    if (to.status !== "open") return; // half-open: the probe's answer says the rest
    const probeInMs = this.settings.coolDownMs;
    if (from.status === "closed" || from === UNKNOWN) {
      return log.warn("speech engine down; out of routing and capabilities until a probe works", {
        ...fields,
        reason: to.reason,
        probe_in_ms: probeInMs,
      });
    }
    if (to.reason !== from.reason) {
      log.warn("speech engine still down", {
        ...fields,
        reason: to.reason,
        probe_in_ms: probeInMs,
      });
    }
  }
}
