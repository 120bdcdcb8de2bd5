// The exporter side against real sockets: with a collector that is not there, a call's trace is
// started, its turns traced and ended without waiting on the network, and the failure is logged
// once however many exports fail; once a collector answers, the spans go out again.
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { startOtlpReceiver } from "../../tests/helpers/otlp_receiver.ts";
import { TurnLog } from "../call/turn_record.ts";
import { openTracer } from "./otel.ts";

/** A loopback port nothing listens on (taken, then freed). */
function closedPort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

function oneTurn(): TurnLog {
  const log = new TurnLog();
  log.open("greeting", "greeting", performance.now());
  log.mark("greeting", "first_unit", performance.now());
  log.mark("greeting", "first_audio", performance.now());
  return log;
}

Deno.test({
  name: "an unreachable collector: calls are traced without waiting, the failure is logged once",
  sanitizeOps: false, // the exporter's retry timers outlive a failed export by design
  sanitizeResources: false,
  async fn() {
    Deno.env.set("OTEL_EXPORTER_OTLP_ENDPOINT", `http://127.0.0.1:${closedPort()}`);
    Deno.env.set("OTEL_EXPORTER_OTLP_TIMEOUT", "500"); // the exporter's retries give up sooner
    const lines: string[] = [];
    const realLog = console.log;
    console.log = (...a: unknown[]) => lines.push(a.join(" "));
    try {
      const tracer = openTracer();
      for (let i = 0; i < 2; i++) {
        const trace = tracer.startCall(`ses_${i}`, { "voice.line": "web" });
        assert(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/.test(trace.traceparent), trace.traceparent);
        trace.end("ended", "caller_hung_up", oneTurn().records()); // returns at once: void
        await tracer.flush(); // each flush an export that fails
      }
      const warned = lines.filter((l) => l.includes("traces could not be exported"));
      assertEquals(warned.length, 1, lines.join("\n"));

      // The collector comes back (at another address, as a restarted one may): spans go out.
      const receiver = startOtlpReceiver();
      Deno.env.set("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint);
      const again = openTracer();
      const trace = again.startCall("ses_back", {});
      trace.end("ended", "caller_hung_up", oneTurn().records());
      await again.flush();
      const spans = await receiver.waitFor((s) => s.some((x) => x.name === "call"));
      assertEquals(spans.map((s) => s.name).sort(), [
        "call",
        "turn",
        "turn.first_packet",
        "turn.synthesis",
      ]);
      await again.shutdown();
      await tracer.shutdown();
      await receiver.close();
    } finally {
      console.log = realLog;
      Deno.env.delete("OTEL_EXPORTER_OTLP_ENDPOINT");
      Deno.env.delete("OTEL_EXPORTER_OTLP_TIMEOUT");
    }
  },
});

Deno.test({
  name:
    "an engine request is a child of the turn it falls in, whenever it is told; else the call's",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const receiver = startOtlpReceiver();
    Deno.env.set("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint);
    try {
      const tracer = openTracer();
      const trace = tracer.startCall("ses_r", {});
      const turns = oneTurn();
      const greeting = turns.record("greeting")!;
      const t0 = Date.parse(greeting.started_at);
      const request = (startMs: number, outcome: "ok" | "failed") => ({
        leg: "synthesis" as const,
        engine: "espeak",
        startMs,
        firstMs: startMs + 5,
        endMs: startMs + 20,
        characters: 12,
        outcome,
      });
      trace.engineRequest(request(t0, "ok")); // before its turn is over: held
      trace.turnOver(greeting);
      trace.engineRequest(request(t0, "ok")); // after: parented at once
      trace.engineRequest(request(t0 + 60_000, "failed")); // in no turn
      trace.end("ended", "caller_hung_up", turns.records());
      await tracer.flush();
      const spans = await receiver.waitFor((s) => s.some((x) => x.name === "call"));
      const call = spans.find((s) => s.name === "call")!;
      const turn = spans.find((s) => s.name === "turn")!;
      const requests = spans.filter((s) => s.name === "engine.synthesis");
      assertEquals(requests.map((r) => r.parentSpanId), [turn.spanId, turn.spanId, call.spanId]);
      assertEquals(requests[0].attributes["voice.first_audio_ms"], 5);
      assertEquals(requests[2].attributes["voice.outcome"], "failed");
      await tracer.shutdown();
    } finally {
      Deno.env.delete("OTEL_EXPORTER_OTLP_ENDPOINT");
      await receiver.close();
    }
  },
});
