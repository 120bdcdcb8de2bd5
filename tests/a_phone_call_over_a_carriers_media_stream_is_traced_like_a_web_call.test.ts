// A phone call is traced as a web call is (the trace is the call's, not the line's): a call
// through a carrier's media stream (the FAKE Twilio stream into the in-process worker), exported
// with the real exporter to a receiver here, is one trace whose root names the phone line and
// carrier, with the greeting's turn under it, and the brain got that trace's traceparent.
import { assert, assertEquals } from "./helpers/assert.ts";
import { loudFrames, startStreamCallRig, until } from "./helpers/stream_phone_call.ts";
import { startOtlpReceiver } from "./helpers/otlp_receiver.ts";
import { shutdownTracing } from "../media/trace/tracing.ts";

Deno.test({
  name: "a phone call over a carrier's media stream exports one trace the brain can join",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const receiver = startOtlpReceiver();
    Deno.env.set("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint);
    const rig = await startStreamCallRig();
    try {
      const { stream } = await rig.dial("twilio");
      const sessionId = new URL(stream.socket.url).pathname.split("/").pop()!;
      await until(() => loudFrames(stream) > 10, "the greeting");
      await stream.hangUp();
      await rig.service.record(sessionId, "ended");

      const spans = await receiver.waitFor((s) => s.some((x) => x.name === "call"), 15_000);
      const call = spans.find((s) => s.name === "call")!;
      assertEquals(call.parentSpanId, "");
      assertEquals(call.attributes["voice.session_id"], sessionId);
      assertEquals(call.attributes["voice.line"], "phone");
      assertEquals(call.attributes["voice.carrier"], "twilio");
      assertEquals(call.attributes["voice.direction"], "inbound");
      assert(spans.every((s) => s.traceId === call.traceId), "one trace");
      const greeting = spans.find((s) => s.name === "turn")!;
      assertEquals(greeting.attributes["voice.turn_id"], "greeting");
      assertEquals(greeting.parentSpanId, call.spanId);
      assertEquals(
        rig.brain.sessions[0].traceContext.traceparent,
        `00-${call.traceId}-${call.spanId}-01`,
      );
    } finally {
      Deno.env.delete("OTEL_EXPORTER_OTLP_ENDPOINT");
      await rig.close();
      await shutdownTracing();
      await receiver.close();
    }
  },
});
