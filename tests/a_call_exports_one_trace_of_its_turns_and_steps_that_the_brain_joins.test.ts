// A whole call with tracing on: the worker process exports over OTLP/HTTP (the real exporter) to a
// receiver in this test, and the call is one trace: the call's span at the root, a span per turn
// under it, each turn's steps and synthesis requests under the turn, every span naming the
// session. The brain was handed the call span's traceparent in SessionStart, and a span its own
// OpenTelemetry SDK starts from it (as docs/traces.md shows) lands in the call's trace.
import { assert, assertEquals } from "./helpers/assert.ts";
import { speech, startCallService, waitForLog } from "./helpers/call_harness.ts";
import { startOtlpReceiver } from "./helpers/otlp_receiver.ts";
import { createBrain, type TraceContext } from "../sdk/brain/mod.ts";
import { propagation, ROOT_CONTEXT } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";

/** The brain's own OpenTelemetry, as docs/traces.md sets it up, exporting to `endpoint`. */
function brainTracing(endpoint: string) {
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const exporter = new OTLPTraceExporter({ url: `${endpoint}/v1/traces` });
  return new TracerProvider({
    resource: resourceFromAttributes({ "service.name": "the-brain" }),
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
  });
}

Deno.test("a call exports one trace: the call, each turn, each turn's steps; the brain gets its traceparent", async () => {
  const receiver = startOtlpReceiver();
  const contexts: TraceContext[] = [];
  const brainProvider = brainTracing(receiver.endpoint);
  const brainTracer = brainProvider.getTracer("the-brain");
  const brain = createBrain({
    onSessionStart: (session) => {
      contexts.push(session.traceContext);
      return "Hello, this is a traced call.";
    },
    async *onTurn(turn, session) {
      // Joining the call's trace, as docs/traces.md shows a customer.
      const parent = propagation.extract(ROOT_CONTEXT, session.traceContext);
      const span = brainTracer.startSpan("brain.reply", {}, parent);
      try {
        yield `You said ${turn.text}.`;
      } finally {
        span.end();
      }
    },
  });
  const service = await startCallService(brain, {
    workerEnv: {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_HEADERS: "x-collector-key=test-key",
      OTEL_SERVICE_NAME: "voice-worker-under-test",
    },
  });
  try {
    const { caller, sessionId } = await service.call();
    await caller.waitForMessage((m) => m.type === "bot-stopped-speaking", 15_000);
    await caller.say(await speech("what is the weather like today"));
    await caller.waitForMessage(
      (m) =>
        m.type === "bot-output" &&
        (m.data as { spoken_status?: string }).spoken_status === "completed" &&
        String((m.data as { text: string }).text).startsWith("You said"),
      15_000,
    );
    await waitForLog(service, sessionId, (e) => e.source === "to_brain" && e.kind === "heard");
    await caller.hangUp();
    const record = await service.record(sessionId, "ended");

    const spans = await receiver.waitFor((s) => s.some((x) => x.name === "call"), 15_000);
    const call = spans.find((s) => s.name === "call")!;
    const mine = spans.filter((s) => s.traceId === call.traceId && s.service !== "the-brain");
    assert(spans.every((s) => s.traceId === call.traceId), "every span exported is of one trace");
    assertEquals(call.parentSpanId, "", "the call's span is the trace's root");
    assertEquals(call.service, "voice-worker-under-test");
    assertEquals(call.attributes["voice.line"], "web");
    assertEquals(call.attributes["voice.status"], "ended");
    assertEquals(receiver.requests[0].get("x-collector-key"), "test-key");

    // A span per turn of the record, under the call, with the turn's own marks as its times.
    const turns = mine.filter((s) => s.name === "turn");
    const recorded = record.timings.turns as {
      turn_id: string;
      latency_ms: Record<string, number>;
      engines: { synthesis: string[] };
    }[];
    assertEquals(
      turns.map((t) => t.attributes["voice.turn_id"]).sort(),
      recorded.map((t) => t.turn_id).sort(),
    );
    for (const t of turns) assertEquals(t.parentSpanId, call.spanId);

    // The caller's spoken turn: every step of the record is a span under its turn, and so is
    // each request to the synthesis engine that spoke its reply.
    const spoken = turns.find((t) => t.attributes["voice.turn.trigger"] === "speech")!;
    const children = mine.filter((s) => s.parentSpanId === spoken.spanId);
    const steps = children.filter((s) => s.name.startsWith("turn."));
    assertEquals(steps.map((s) => s.name).sort(), [
      "turn.brain",
      "turn.end_of_turn",
      "turn.first_packet",
      "turn.recognition",
      "turn.synthesis",
      "turn.to_brain",
    ]);
    const turnRecord = recorded.find((t) => t.turn_id === spoken.attributes["voice.turn_id"])!;
    for (const s of steps) {
      assert(s.startNs <= s.endNs && s.startNs >= spoken.startNs, `${s.name} lies inside its turn`);
      const step = s.name === "turn.first_packet" ? "end_to_first_audio" : s.name.slice(5);
      const ms = Number(s.endNs - s.startNs) / 1e6;
      const want = turnRecord.latency_ms[step];
      assert(Math.abs(ms - want) < 1, `${s.name}: ${ms} ms, the record says ${want}`);
    }
    const requests = children.filter((s) => s.name === "engine.synthesis");
    assert(requests.length >= 1, "the reply's synthesis request is under its turn");
    for (const r of requests) {
      assertEquals(r.attributes["voice.outcome"], "ok");
      assert(turnRecord.engines.synthesis.includes(String(r.attributes["voice.engine"])));
    }
    const greeting = turns.find((t) => t.attributes["voice.turn_id"] === "greeting")!;
    assert(mine.some((s) => s.name === "engine.synthesis" && s.parentSpanId === greeting.spanId));
    for (const s of mine) assertEquals(s.attributes["voice.session_id"], sessionId, s.name);

    // The brain was told the call's span as its parent: W3C traceparent of this trace, and the
    // brain's own span, exported by its own SDK, sits in the call's trace under the call.
    assertEquals(contexts.length, 1);
    assertEquals(contexts[0].traceparent, `00-${call.traceId}-${call.spanId}-01`);
    await brainProvider.forceFlush();
    const all = await receiver.waitFor((s) => s.some((x) => x.name === "brain.reply"));
    const reply = all.find((s) => s.name === "brain.reply")!;
    assertEquals([reply.service, reply.traceId, reply.parentSpanId], [
      "the-brain",
      call.traceId,
      call.spanId,
    ]);
  } finally {
    await service.close();
    await brainProvider.shutdown();
    await receiver.close();
  }
});
