// What tracing costs a call (issue 37). Run: deno task bench traces (~10 s).
//
// The work tracing adds to a call's own thread, through the same entry points a call uses
// (startCallTrace at the call's start, turnOver per turn, end at the call's end), for calls of
// TURNS turns whose marks are a real turn log's, each with one synthesis request: with no endpoint configured (the baseline: an
// environment look-up per call, nothing else) and with one, exporting over OTLP/HTTP to a
// receiver on loopback. Export (serialising, HTTP) runs off the call's path on the batch timer;
// its cost is measured apart as the time to flush every queued span, per call, and what a call
// sends to the collector in bytes. The SDK's one-time load is shown on its own line.
import { TurnLog } from "../media/call/turn_record.ts";
import {
  flushTraces,
  shutdownTracing,
  startCallTrace,
  tracingStats,
} from "../media/trace/tracing.ts";
import { startOtlpReceiver } from "../tests/helpers/otlp_receiver.ts";

const CALLS = 400;
const TURNS = 6;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const f1 = (n: number) => n.toFixed(1);

/** A call's turns as its turn log records them: a greeting, then spoken turns with every mark. */
function recordedTurns() {
  const log = new TurnLog();
  let t = performance.now();
  log.open("greeting", "greeting", t);
  log.mark("greeting", "first_unit", t + 120);
  log.mark("greeting", "first_audio", t + 180);
  log.mark("greeting", "done", t + 2000);
  for (let i = 1; i < TURNS; i++) {
    t += 4000;
    log.utteranceStarted(t, 200);
    log.utteranceMark("speech_ended", t + 1500);
    log.utteranceMark("final_requested", t + 1550);
    log.utteranceMark("final_text", t + 1620);
    log.utteranceMark("end_of_turn", t + 1800);
    log.utteranceRecognisedBy("pocketsphinx");
    log.utteranceSent(`t${i}`, "what is the weather like today", t + 1805);
    log.mark(`t${i}`, "first_unit", t + 2300);
    log.mark(`t${i}`, "first_audio", t + 2400);
    log.unitDone(`t${i}`, {
      unit_id: "u1",
      text: "It is sunny.",
      heard: "It is sunny.",
      cut_off: false,
      engine: "espeak",
    });
    log.mark(`t${i}`, "done", t + 3500);
  }
  return log.records();
}

interface Pass {
  perCallUs: number;
  perTurnUs: number;
  /** Flushing the queue, per call: the export's own cost, off the call's path. */
  exportUs: number;
}

/** Calls between flushes: their spans fit the bounded queue, as calls spread over time would. */
const FLUSH_EVERY = 50;

/** One pass of CALLS calls through the tracing entry points; µs on the call's thread. */
async function pass(turns: ReturnType<typeof recordedTurns>): Promise<Pass> {
  let callUs = 0, turnUs = 0, exportUs = 0;
  for (let c = 0; c < CALLS; c++) {
    let t0 = performance.now();
    const trace = await startCallTrace(`ses_${c}`, { "voice.line": "web" });
    callUs += performance.now() - t0;
    for (const [i, r] of turns.entries()) {
      t0 = performance.now();
      trace?.engineRequest(requests[i]); // the reply's synthesis, as CallSpeech tells it
      trace?.turnOver(r);
      turnUs += performance.now() - t0;
    }
    t0 = performance.now();
    trace?.end("ended", "caller_hung_up", turns);
    callUs += performance.now() - t0;
    if ((c + 1) % FLUSH_EVERY === 0) {
      t0 = performance.now();
      await flushTraces();
      exportUs += performance.now() - t0;
    }
  }
  return {
    perCallUs: callUs * 1000 / CALLS,
    perTurnUs: turnUs * 1000 / (CALLS * turns.length),
    exportUs: exportUs * 1000 / CALLS,
  };
}

const turns = recordedTurns();
/** One synthesis request per turn, from its first unit to its first audio and on. */
const requests = turns.map((r) => {
  const startMs = Date.parse(r.started_at) + r.marks.first_unit!;
  return {
    leg: "synthesis" as const,
    engine: "espeak",
    startMs,
    firstMs: startMs + 80,
    endMs: startMs + 300,
    characters: 12,
    outcome: "ok" as const,
  };
});
for (const v of ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]) {
  Deno.env.delete(v);
}
const off: Pass[] = [];
for (let r = 0; r < 5; r++) off.push(await pass(turns));
if (tracingStats.sdkLoads !== 0) throw new Error("tracing off loaded the SDK");

const receiver = startOtlpReceiver();
Deno.env.set("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint);
const t0 = performance.now();
await startCallTrace("ses_load", {}); // the SDK's one-time load
const loadMs = performance.now() - t0;
await flushTraces();
const on: Pass[] = [];
const bytesBefore = () => receiver.bytes;
const spansPerCall = 1 + 2 * turns.length + turns.reduce((n, r) => n + planSteps(r), 0);
let bytes = 0;
for (let r = 0; r < 5; r++) {
  const b0 = bytesBefore(), s0 = receiver.spans.length;
  on.push(await pass(turns));
  // Every span arrives: none was dropped from the bounded queue.
  await receiver.waitFor((s) => s.length === s0 + CALLS * spansPerCall);
  bytes = (bytesBefore() - b0) / CALLS;
}
await shutdownTracing();
await receiver.close();

/** The step spans planned for a turn (span_plan.ts), counted from its marks. */
function planSteps(r: (typeof turns)[number]): number {
  const m = r.marks;
  const pairs: [string, string][] = [
    ["speech_ended", "end_of_turn"],
    ["end_of_turn", "user_turn_sent"],
    ["user_turn_sent", "first_unit"],
    ["first_unit", "first_audio"],
    ["final_requested", "final_text"],
  ];
  return pairs.filter(([a, b]) =>
    m[a as keyof typeof m] !== undefined && m[b as keyof typeof m] !== undefined
  ).length +
    (m.first_audio !== undefined ? 1 : 0);
}

const offCall = median(off.map((p) => p.perCallUs)), offTurn = median(off.map((p) => p.perTurnUs));
const onCall = median(on.map((p) => p.perCallUs)), onTurn = median(on.map((p) => p.perTurnUs));
console.log(
  `## tracing's cost on a call's thread (median of 5 passes of ${CALLS} calls of ${turns.length} turns)`,
);
console.log(`| | per call (start + end) µs | per turn µs | whole call µs |`);
console.log(`| --- | ---: | ---: | ---: |`);
console.log(
  `| off (baseline: no endpoint) | ${f1(offCall)} | ${f1(offTurn)} | ${
    f1(offCall + offTurn * turns.length)
  } |`,
);
console.log(
  `| on (OTLP/HTTP to loopback) | ${f1(onCall)} | ${f1(onTurn)} | ${
    f1(onCall + onTurn * turns.length)
  } |`,
);
console.log(
  `\nexport, off the call's path (batch timer): ${
    f1(median(on.map((p) => p.exportUs)))
  } µs per call, ${Math.round(bytes)} bytes of OTLP JSON per call (${spansPerCall} spans)`,
);
console.log(
  `the SDK's one-time load, on the first traced call: ${
    f1(loadMs)
  } ms; SDK loads with tracing off: 0`,
);
