// The worker's metrics: fed calls, turns, pacing and engine activity, read as Prometheus text;
// and `/metrics` on the worker's port only with the admin token (never open without one).
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { readReply } from "../../tests/helpers/api_server.ts";
import type { Pool } from "../../db/client.ts";
import type { TokenVerifier } from "../../common/token.ts";
import { setQuiet } from "../../common/log.ts";
import { startMetricsListener } from "../../common/metrics/listener.ts";
import { described, sample } from "../../common/metrics/testing.ts";
import { LatenessHistogram } from "../audio/pacer.ts";
import type { Call } from "../call/call.ts";
import type { CallEngines } from "../engines/call_engines.ts";
import type { EngineActivity } from "../engines/routing.ts";
import { EngineHealth } from "../engines/engine_health.ts";
import { SynthesisError } from "../tts/engine.ts";
import { createWorkerApp, type WorkerContext } from "../worker.ts";
import { WorkerMetrics, type WorkerView } from "./metrics.ts";

/** What the metrics use of a call, with its end in the test's hands. */
function fakeCall(lateMs: number[], skipped = 0) {
  const histogram = new LatenessHistogram();
  for (const ms of lateMs) histogram.add(ms);
  let end!: () => void;
  const call = {
    line: { pacing: { skipped, histogram } },
    ended: new Promise<void>((r) => (end = r)),
    endStatus: undefined as string | undefined,
    endReason: undefined as string | undefined,
    turnObserver: undefined as unknown,
  };
  return {
    call,
    asCall: call as unknown as Call,
    async end(status: string, reason: string) {
      call.endStatus = status;
      call.endReason = reason;
      end();
      await call.ended;
    },
  };
}

function fakeEngines(
  recognition: Record<string, EngineActivity>,
  synthesis: Record<string, EngineActivity>,
): CallEngines {
  return {
    recognition: { activity: new Map(Object.entries(recognition)) },
    synthesis: { activity: new Map(Object.entries(synthesis)) },
  } as unknown as CallEngines;
}

function node(calls: Map<string, Call>, extra: Partial<WorkerView> = {}): WorkerView {
  return { nodeId: "node-1", calls, ...extra };
}

Deno.test("calls started and ended are counted, ended by status and reason", async () => {
  const metrics = new WorkerMetrics();
  const calls = new Map<string, Call>();
  metrics.watch(node(calls, { capacity: 12 }));
  const a = fakeCall([]), b = fakeCall([]);
  calls.set("a", a.asCall).set("b", b.asCall);
  metrics.track(a.asCall);
  metrics.track(b.asCall);
  metrics.track(a.asCall); // a renegotiation of a running call is not a new call
  let text = await metrics.registry.metrics();
  assertEquals(sample(text, "voice_calls_started_total"), 2);
  assertEquals(sample(text, "voice_worker_active_calls", { node_id: "node-1" }), 2);
  assertEquals(sample(text, "voice_worker_capacity", { node_id: "node-1" }), 12);
  assertEquals(sample(text, "voice_worker_draining", { node_id: "node-1" }), 0);

  calls.delete("a");
  await a.end("ended", "hangup");
  calls.delete("b");
  await b.end("failed", "brain_unreachable");
  text = await metrics.registry.metrics();
  assert(described(text, "voice_calls_ended_total", "counter"));
  assertEquals(sample(text, "voice_calls_ended_total", { status: "ended", reason: "hangup" }), 1);
  assertEquals(
    sample(text, "voice_calls_ended_total", { status: "failed", reason: "brain_unreachable" }),
    1,
  );
  assertEquals(sample(text, "voice_worker_active_calls", { node_id: "node-1" }), 0);
});

Deno.test("turn latencies are histograms in seconds by step, barge-ins a counter", async () => {
  const metrics = new WorkerMetrics();
  const a = fakeCall([]);
  metrics.track(a.asCall);
  const turns = a.call.turnObserver as WorkerMetrics["turns"];
  assert(turns === metrics.turns, "the call tells the node's metrics about its turns");
  turns.latency("to_brain", 40);
  turns.latency("brain", 900);
  turns.latency("brain", 2500);
  turns.latency("end_to_first_audio", 1200);
  turns.interrupted();
  const text = await metrics.registry.metrics();
  assert(described(text, "voice_turn_latency_seconds", "histogram"));
  assertEquals(sample(text, "voice_turn_latency_seconds_count", { step: "brain" }), 2);
  assertEquals(sample(text, "voice_turn_latency_seconds_sum", { step: "brain" }), 3.4);
  assertEquals(sample(text, "voice_turn_latency_seconds_bucket", { step: "brain", le: "1" }), 1);
  assertEquals(
    sample(text, "voice_turn_latency_seconds_bucket", { step: "to_brain", le: "0.05" }),
    1,
  );
  assertEquals(sample(text, "voice_turn_latency_seconds_count", { step: "end_to_first_audio" }), 1);
  assertEquals(sample(text, "voice_barge_ins_total"), 1);
});

Deno.test("pacer lateness and skipped frames add live calls to the calls that ended", async () => {
  const metrics = new WorkerMetrics();
  const calls = new Map<string, Call>();
  metrics.watch(node(calls));
  const a = fakeCall([0.5, 3, 30], 2), b = fakeCall([0.1, 150], 5);
  metrics.track(a.asCall);
  metrics.track(b.asCall);
  const read = async () => {
    const text = await metrics.registry.metrics();
    return {
      text,
      count: sample(text, "voice_pacer_lateness_seconds_count"),
      le1ms: sample(text, "voice_pacer_lateness_seconds_bucket", { le: "0.001" }),
      le5ms: sample(text, "voice_pacer_lateness_seconds_bucket", { le: "0.005" }),
      le100ms: sample(text, "voice_pacer_lateness_seconds_bucket", { le: "0.1" }),
      inf: sample(text, "voice_pacer_lateness_seconds_bucket", { le: "+Inf" }),
      skipped: sample(text, "voice_pacer_skipped_frames_total"),
    };
  };
  const live = await read();
  assert(described(live.text, "voice_pacer_lateness_seconds", "histogram"), live.text);
  assertEquals([live.count, live.le1ms, live.le5ms, live.le100ms, live.inf], [5, 2, 3, 4, 5]);
  assertEquals(live.skipped, 7);
  const sum = sample(live.text, "voice_pacer_lateness_seconds_sum")!;
  assert(Math.abs(sum - 0.1836) < 1e-9, `sum ${sum}`);

  // A call that ends leaves its figures behind: the totals never go down.
  await a.end("ended", "hangup");
  const after = await read();
  assertEquals([after.count, after.inf, after.skipped], [5, 5, 7]);
  b.call.line.pacing.skipped = 6;
  b.call.line.pacing.histogram.add(1);
  const later = await read();
  assertEquals([later.count, later.skipped], [6, 8]);
});

Deno.test("each call's line pacing counts in the pacer figures, live and after it ends", async () => {
  const metrics = new WorkerMetrics();
  metrics.watch(node(new Map()));
  const web = fakeCall([0.5], 1), phone = fakeCall([2, 40], 3);
  metrics.track(web.asCall);
  metrics.track(phone.asCall);
  const read = async () => {
    const text = await metrics.registry.metrics();
    return [
      sample(text, "voice_pacer_lateness_seconds_count"),
      sample(text, "voice_pacer_skipped_frames_total"),
    ];
  };
  assertEquals(await read(), [3, 4]);
  await phone.end("ended", "caller_hung_up");
  assertEquals(await read(), [3, 4]);
});

Deno.test("engine queue depth and errors are read from the routers, by engine and leg", async () => {
  const metrics = new WorkerMetrics();
  metrics.watch(node(new Map(), {
    engines: fakeEngines(
      { pocketsphinx: { outstanding: 1, errors: 0 } },
      { "espeak-ng": { outstanding: 3, errors: 2 }, sarvam: { outstanding: 0, errors: 4 } },
    ),
  }));
  const text = await metrics.registry.metrics();
  const depth = (engine: string, leg: string) =>
    sample(text, "voice_speech_engine_queue_depth", { engine, leg });
  const errors = (engine: string, leg: string) =>
    sample(text, "voice_speech_engine_errors_total", { engine, leg });
  assertEquals(depth("pocketsphinx", "recognition"), 1);
  assertEquals(depth("espeak-ng", "synthesis"), 3);
  assertEquals(errors("pocketsphinx", "recognition"), 0);
  assertEquals(errors("espeak-ng", "synthesis"), 2);
  assertEquals(errors("sarvam", "synthesis"), 4);
});

Deno.test("provider engines' breakers: down per engine and leg, transitions by the state entered", async () => {
  setQuiet(true);
  const health = new EngineHealth([
    {
      name: "sarvam-bulbul",
      leg: "synthesis",
      probe: () => Promise.reject(new SynthesisError("HTTP 403", { fault: "auth" })),
    },
    { name: "sarvam-saaras", leg: "recognition", probe: () => Promise.resolve() },
    { name: "espeak-ng", leg: "synthesis" },
  ]);
  await health.start();
  const metrics = new WorkerMetrics();
  metrics.watch(node(new Map(), { engines: { health } as unknown as CallEngines }));
  const text = await metrics.registry.metrics();
  assert(described(text, "voice_speech_engine_down", "gauge"));
  assert(described(text, "voice_speech_engine_breaker_transitions_total", "counter"));
  const down = (engine: string, leg: string) =>
    sample(text, "voice_speech_engine_down", { engine, leg });
  const moves = (engine: string, leg: string, to: string) =>
    sample(text, "voice_speech_engine_breaker_transitions_total", { engine, leg, to });
  assertEquals(down("sarvam-bulbul", "synthesis"), 1);
  assertEquals(down("sarvam-saaras", "recognition"), 0);
  assertEquals(down("espeak-ng", "synthesis"), undefined); // local: no breaker
  assertEquals(moves("sarvam-bulbul", "synthesis", "open"), 1);
  assertEquals(moves("sarvam-saaras", "recognition", "closed"), 1);
  assertEquals(moves("sarvam-saaras", "recognition", "half_open"), 0);
  health.close();
  setQuiet(false);
});

const ADMIN = "adm_worker_test_token_0123";

function workerApp(extra: Partial<WorkerContext> = {}) {
  const w: WorkerContext = {
    sql: {} as Pool,
    nodeId: "node-1",
    verifier: {} as TokenVerifier,
    iceAddresses: ["127.0.0.1"],
    calls: new Map(),
    ...extra,
  };
  return { w, app: createWorkerApp(w) };
}

Deno.test("worker /metrics is refused without the admin token or with a wrong one", async () => {
  const { app } = workerApp({ adminToken: ADMIN });
  for (const auth of [undefined, "Bearer adm_wrong", `Bearer ${ADMIN}x`, ADMIN]) {
    const r = await readReply(
      await app.request("/metrics", { headers: auth ? { authorization: auth } : {} }),
    );
    assertEquals(r.status, 401, String(auth));
    assertEquals(r.body.error.code, "unauthorized");
    assert(typeof r.body.correlation_id === "string", "the error envelope");
  }
});

Deno.test("a worker without an admin token refuses /metrics on its port, whatever is sent", async () => {
  const { app } = workerApp();
  for (const auth of [undefined, "Bearer ", "Bearer anything"]) {
    const res = await app.request("/metrics", { headers: auth ? { authorization: auth } : {} });
    assertEquals(res.status, 401);
    assertEquals((await res.json()).error.code, "unauthorized");
  }
});

Deno.test("worker /metrics is served with the admin token; the app makes the metrics if none are given", async () => {
  const { w, app } = workerApp({ adminToken: ADMIN, capacity: 9 });
  assert(w.metrics instanceof WorkerMetrics);
  const res = await app.request("/metrics", { headers: { authorization: `Bearer ${ADMIN}` } });
  assertEquals(res.status, 200);
  assertEquals(res.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  const text = await res.text();
  assertEquals(sample(text, "voice_worker_capacity", { node_id: "node-1" }), 9);
  assertEquals(sample(text, "voice_calls_started_total"), 0);
});

Deno.test("the worker's given metrics are served by the metrics listener without credentials", async () => {
  setQuiet(true);
  const metrics = new WorkerMetrics();
  workerApp({ metrics, capacity: 4 });
  const listener = startMetricsListener({
    hostname: "127.0.0.1",
    port: 0,
    registry: metrics.registry,
  });
  try {
    const res = await fetch(`http://127.0.0.1:${listener.port}/metrics`);
    assertEquals(res.status, 200);
    assertEquals(sample(await res.text(), "voice_worker_capacity", { node_id: "node-1" }), 4);
  } finally {
    await listener.close();
  }
});
