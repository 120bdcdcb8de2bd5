// Tracing off costs nothing: no OpenTelemetry module is in the worker's module graph but behind
// the one dynamic import that tracing.ts makes when an endpoint is configured, and a whole call
// with no endpoint loads none, builds no span and hands the brain no trace context. The same
// worker, once an endpoint is configured, loads the SDK once and exports (so the proof can fail).
import { assert, assertEquals } from "./helpers/assert.ts";
import { startInProcessCallService } from "./helpers/call_harness.ts";
import { startOtlpReceiver } from "./helpers/otlp_receiver.ts";
import { createBrain, type TraceContext } from "../sdk/brain/mod.ts";
import { shutdownTracing, tracingStats } from "../media/trace/tracing.ts";

const ROOT = new URL("..", import.meta.url);
const OTEL = "npm:@opentelemetry/";

interface Dep {
  specifier: string;
  code?: { specifier: string };
  isDynamic?: boolean;
}

Deno.test("the worker's module graph reaches OpenTelemetry only through tracing.ts's dynamic import", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", "media/main.ts"],
    cwd: ROOT,
    stdout: "piped",
    stderr: "null",
  }).output();
  assert(out.success, "deno info failed");
  const graph = JSON.parse(new TextDecoder().decode(out.stdout)) as {
    modules: { specifier: string; dependencies?: Dep[] }[];
  };
  const deps = new Map(graph.modules.map((m) => [m.specifier, m.dependencies ?? []]));
  const tracing = new URL("media/trace/tracing.ts", ROOT).href;
  const otel = new URL("media/trace/otel.ts", ROOT).href;
  const door = deps.get(tracing)?.find((d) => d.code?.specifier === otel);
  assert(door?.isDynamic, "tracing.ts imports otel.ts, dynamically");
  assert(
    deps.get(otel)!.some((d) => d.code?.specifier.startsWith(OTEL)),
    "otel.ts is what loads the SDK",
  );
  // Every module the worker can load without going through that door.
  const seen = new Set<string>();
  const walk = (spec: string) => {
    if (seen.has(spec)) return;
    seen.add(spec);
    for (const d of deps.get(spec) ?? []) {
      const to = d.code?.specifier;
      if (to && !(spec === tracing && to === otel)) walk(to);
    }
  };
  walk(new URL("media/main.ts", ROOT).href);
  assert(seen.has(tracing), "the worker reaches tracing.ts");
  assertEquals([...seen].filter((s) => s.startsWith(OTEL) || s === otel), []);
});

Deno.test({
  name: "a call with no endpoint loads no OpenTelemetry and gives the brain no trace context",
  // The SDK's batch timer and exporter sockets are closed by shutdownTracing at the end.
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    for (const v of ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]) {
      Deno.env.delete(v);
    }
    const contexts: TraceContext[] = [];
    const brain = createBrain({
      onSessionStart: (session) => {
        contexts.push(session.traceContext);
        return "Hello.";
      },
      onTurn: () => "Yes.",
    });
    const receiver = startOtlpReceiver();
    const service = await startInProcessCallService(brain);
    try {
      const off = await service.call();
      await off.caller.waitForMessage((m) => m.type === "bot-stopped-speaking", 15_000);
      await off.caller.hangUp();
      await service.record(off.sessionId, "ended");
      assertEquals(tracingStats.sdkLoads, 0, "no OpenTelemetry module was loaded");
      assertEquals(contexts, [{}], "SessionStart carried no trace context");

      // The control: the same worker with an endpoint loads the SDK once and exports the call.
      Deno.env.set("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint);
      const on = await service.call();
      await on.caller.waitForMessage((m) => m.type === "bot-stopped-speaking", 15_000);
      await on.caller.hangUp();
      await service.record(on.sessionId, "ended");
      assertEquals(tracingStats.sdkLoads, 1);
      assert(contexts[1].traceparent?.startsWith("00-"), "the traced call's brain got one");
      const spans = await receiver.waitFor((s) => s.some((x) => x.name === "call"));
      assertEquals(
        [...new Set(spans.map((s) => s.attributes["voice.session_id"]))],
        [on.sessionId],
        "only the traced call's spans were exported",
      );
    } finally {
      Deno.env.delete("OTEL_EXPORTER_OTLP_ENDPOINT");
      await service.close();
      await shutdownTracing();
      await receiver.close();
    }
  },
});
