// The call's trace as the TypeScript SDK shows it: session.traceContext is SessionStart's
// traceparent / tracestate as a carrier OpenTelemetry's propagation.extract reads (set keys
// only), and {} on a call the worker does not trace.
import assert from "node:assert/strict";
import { createBrain, type Session } from "./mod.ts";
import { TestWorker } from "./test_worker.ts";

const PARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

Deno.test("session.traceContext carries SessionStart's trace context, and is {} untraced", async () => {
  const sessions: Session[] = [];
  const served = createBrain({
    onSessionStart: (s) => void sessions.push(s),
    onTurn: () => {},
  }).serve({ hostname: "127.0.0.1", port: 0, path: "/brain" });
  const traced = await TestWorker.dial(served.url, "ses_t");
  const plain = await TestWorker.dial(served.url, "ses_p");
  try {
    traced.send("session_start", {
      session_id: "ses_t",
      agent_id: "agt",
      traceparent: PARENT,
      tracestate: "vendor=abc",
    });
    plain.start("ses_p");
    await Promise.all([traced.next(), plain.next()]); // the greetings
    const byId = Object.fromEntries(sessions.map((s) => [s.id, s]));
    assert.deepEqual(byId.ses_t.traceContext, { traceparent: PARENT, tracestate: "vendor=abc" });
    assert.deepEqual(byId.ses_p.traceContext, {});
  } finally {
    await traced.close();
    await plain.close();
    await served.shutdown();
  }
});
