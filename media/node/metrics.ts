// The worker's Prometheus metrics: one registry per WorkerMetrics (several workers may share a
// process in tests), read at `/metrics` on the worker's port (admin token) and on METRICS_PORT.
// Calls are counted as the offer endpoint accepts them and as they end; turn latencies and
// barge-ins as the call's turn log learns them; pacing, engine load and the node's gauges are
// read at scrape time from the live calls and engines (plus the totals of calls that ended).
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { Pool } from "../../db/client.ts";
import { registerPoolMetrics } from "../../db/pool_metrics.ts";
import { registerProcessMetrics } from "../../common/metrics/process.ts";
import { registerScrapedHistogram } from "../../common/metrics/scraped.ts";
import { LatenessHistogram } from "../audio/pacer.ts";
import type { Call } from "../call/call.ts";
import type { CallEngines } from "../engines/call_engines.ts";
import type { LatencyStep, TurnObserver } from "../call/turn_record.ts";
import type { EngineActivity } from "../engines/routing.ts";

/** What the metrics read of the node at scrape time (the WorkerContext has all of it). */
export interface WorkerView {
  nodeId: string;
  calls: Map<string, unknown>;
  /** The capacity the node registered; absent, no capacity series. */
  capacity?: number;
  draining?: boolean;
  engines?: CallEngines;
  sql?: Pool;
}

/** Upper bounds of the turn latency buckets, in seconds. */
export const TURN_LATENCY_BUCKETS = [0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10];
/** Upper bounds of the pacer lateness buckets, in seconds (edges of the pacer's 0.25 ms bins). */
export const PACER_LATENESS_BUCKETS = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1];

export class WorkerMetrics {
  readonly registry = new Registry();
  #node?: WorkerView;
  #live = new Set<Call>();
  /** Pacing of the calls that ended, so the totals never go down when a call leaves. */
  #endedLateness = new LatenessHistogram();
  #endedSkipped = 0;

  readonly callsStarted = new Counter({
    name: "voice_calls_started_total",
    help: "Calls this worker accepted an offer for (each session's first offer).",
    registers: [this.registry],
  });
  readonly callsEnded = new Counter({
    name: "voice_calls_ended_total",
    help: "Calls that ended on this worker, by final status (ended, failed) and end reason.",
    labelNames: ["status", "reason"],
    registers: [this.registry],
  });
  readonly turnLatency = new Histogram({
    name: "voice_turn_latency_seconds",
    help: "Per-turn latency by step, as the session record's timings.turns, from the caller's " +
      "end of speech: end_of_turn (silence until the turn was judged over), to_brain (to " +
      "UserTurn sent), brain (to the first speech unit), synthesis (to first audio sent); " +
      "end_to_first_audio is their sum; recognition (the recogniser's own time for the final " +
      "text) overlaps them. Observed once per turn as each step completes.",
    labelNames: ["step"],
    buckets: TURN_LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly bargeIns = new Counter({
    name: "voice_barge_ins_total",
    help: "Bot turns the caller cut off by speaking while the reply was awaited or playing.",
    registers: [this.registry],
  });

  /** What a call's turn log tells: latencies and barge-ins into the metrics above. */
  readonly turns: TurnObserver = {
    latency: (step: LatencyStep, ms: number) => this.turnLatency.observe({ step }, ms / 1000),
    interrupted: () => this.bargeIns.inc(),
  };

  constructor() {
    const node = () => this.#node;
    const lateness = () => this.#lateness();
    const skipped = () => this.#skipped();
    new Gauge({
      name: "voice_worker_active_calls",
      help: "Calls running on this worker node now.",
      labelNames: ["node_id"],
      registers: [this.registry],
      collect() {
        this.reset();
        const n = node();
        if (n) this.set({ node_id: n.nodeId }, n.calls.size);
      },
    });
    new Gauge({
      name: "voice_worker_capacity",
      help: "Calls this worker node registered it can run at once (WORKER_CAPACITY).",
      labelNames: ["node_id"],
      registers: [this.registry],
      collect() {
        this.reset();
        const n = node();
        if (n?.capacity !== undefined) this.set({ node_id: n.nodeId }, n.capacity);
      },
    });
    new Gauge({
      name: "voice_worker_draining",
      help: "1 while this worker node drains (takes no new calls), else 0.",
      labelNames: ["node_id"],
      registers: [this.registry],
      collect() {
        this.reset();
        const n = node();
        if (n) this.set({ node_id: n.nodeId }, n.draining ? 1 : 0);
      },
    });
    registerScrapedHistogram(this.registry, {
      name: "voice_pacer_lateness_seconds",
      help: "How late each outbound 20 ms audio tick ran against its deadline, over every call " +
        "of this worker since it started (early ticks count as on time).",
      read: () => {
        const merged = lateness();
        return {
          buckets: PACER_LATENESS_BUCKETS.map((le) => ({
            le,
            count: merged.countBelow(le * 1000),
          })),
          count: merged.count,
          sum: merged.sumMs / 1000,
        };
      },
    });
    new Counter({
      name: "voice_pacer_skipped_frames_total",
      help: "Outbound 20 ms frames skipped after an event-loop stall (the pacer rejoined its " +
        "grid instead of bursting), over every call of this worker since it started.",
      registers: [this.registry],
      collect() {
        this.reset();
        this.inc(skipped());
      },
    });
    const legs = (): [string, Map<string, EngineActivity> | undefined][] => [
      ["recognition", node()?.engines?.recognition?.activity],
      ["synthesis", node()?.engines?.synthesis?.activity],
    ];
    new Gauge({
      name: "voice_speech_engine_queue_depth",
      help: "Work outstanding at a speech engine now, over the worker's calls: units being " +
        "synthesized and utterances awaiting their final text, running or waiting in the " +
        "engine's own queue.",
      labelNames: ["engine", "leg"],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [leg, activity] of legs()) {
          for (const [engine, a] of activity ?? []) this.set({ engine, leg }, a.outstanding);
        }
      },
    });
    new Counter({
      name: "voice_speech_engine_errors_total",
      help: "Speech engine failures (an engine that could not open, a recognition that failed, " +
        "a unit whose synthesis failed; not cancellations), whether or not a fallback took over.",
      labelNames: ["engine", "leg"],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [leg, activity] of legs()) {
          for (const [engine, a] of activity ?? []) this.inc({ engine, leg }, a.errors);
        }
      },
    });
    const breakers = () => node()?.engines?.health?.breakers() ?? [];
    new Gauge({
      name: "voice_speech_engine_down",
      help: "1 while a provider speech engine is out of routing and of the node's capabilities " +
        "(its key refused, or unreachable; open or probing), else 0. Local engines have no series.",
      labelNames: ["engine", "leg"],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const b of breakers()) this.set({ engine: b.engine, leg: b.leg }, b.up ? 0 : 1);
      },
    });
    new Counter({
      name: "voice_speech_engine_breaker_transitions_total",
      help: "Changes of a provider speech engine's breaker, by the state entered: open (down: " +
        "its key refused, or unreachable N times running; or its probe failed), half_open (a " +
        "probe sent after the cool-down), closed (up again).",
      labelNames: ["engine", "leg", "to"],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const b of breakers()) {
          for (const [to, n] of Object.entries(b.transitions)) {
            this.inc({ engine: b.engine, leg: b.leg, to: to.replace("-", "_") }, n);
          }
        }
      },
    });
    registerProcessMetrics(this.registry);
  }

  /** The node the scrape-time figures are read from (createWorkerApp calls it). */
  watch(node: WorkerView): void {
    if (this.#node) return;
    this.#node = node;
    if (node.sql) registerPoolMetrics(this.registry, { main: node.sql });
  }

  /**
   * A call the offer endpoint (or the SIP service) accepted: counted now, its turns as they go,
   * its end once. A call's pacing is its line's (a page's Opus, RTP or a carrier's stream).
   */
  track(call: Call): void {
    if (this.#live.has(call)) return;
    this.#live.add(call);
    this.callsStarted.inc();
    call.turnObserver = this.turns;
    call.ended.then(() => this.#ended(call));
  }

  #ended(call: Call): void {
    if (!this.#live.delete(call)) return;
    const pacing = call.line.pacing;
    this.#endedSkipped += pacing.skipped;
    if (pacing.histogram) this.#endedLateness.merge(pacing.histogram);
    this.callsEnded.inc({ status: call.endStatus ?? "ended", reason: call.endReason ?? "unknown" });
  }

  /** The ended calls' lateness plus each live call's, merged into a new histogram. */
  #lateness(): LatenessHistogram {
    const merged = new LatenessHistogram();
    merged.merge(this.#endedLateness);
    for (const call of this.#live) {
      const h = call.line.pacing.histogram;
      if (h) merged.merge(h);
    }
    return merged;
  }

  /** Frames skipped by the ended calls plus each live call's. */
  #skipped(): number {
    let n = this.#endedSkipped;
    for (const call of this.#live) n += call.line.pacing.skipped;
    return n;
  }
}
