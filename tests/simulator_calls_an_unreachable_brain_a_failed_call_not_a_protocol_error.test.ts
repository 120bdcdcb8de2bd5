// `deno task call` against an agent whose brain nothing listens for: the worker fails the call
// (brain_unreachable) and says so in its call-ended notice. The simulator reports that, "call
// failed" with the session's end reason, and what to check, not a "protocol error", which would
// send a brain developer looking for a bug in frames their brain never got to send.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { startInProcessCallService } from "./helpers/call_harness.ts";
import { freePort } from "./helpers/process.ts";
import { createBrain } from "../sdk/brain/mod.ts";
import { runCall } from "../cli/call.ts";

Deno.test("the simulator calls an unreachable brain a failed call with its reason", async () => {
  const service = await startInProcessCallService(
    createBrain({ onSessionStart: () => "Hello.", onTurn: () => "OK." }),
  );
  try {
    const url = `ws://127.0.0.1:${freePort()}/brain`; // nothing listens there
    const tenant = await service.tenantFor(url);
    const out: string[] = [], err: string[] = [];
    const code = await runCall(
      ["--api", service.api.url, "--key", tenant.sk, "--agent", tenant.agent_id, "--json"],
      {},
      { out: (line) => out.push(line), err: (line) => err.push(line) },
    );
    assertEquals(code, 1, out.join("\n"));
    const report = JSON.parse(out.join("\n"));
    assertEquals(report.failure.kind, "call failed");
    assertEquals(report.failure.code, "brain_unreachable");
    assertMatch(
      report.failure.message,
      /^the service failed the call during (connect|the greeting) \(brain_unreachable\): the brain could not be reached: /,
    );
    const record = await service.record(report.session_id, "failed");
    assertEquals(record.end_reason, report.failure.code, "the reason is the session's");
    assertEquals(err.length, 1, err.join("\n"));
    assertMatch(
      err[0],
      /^call: the worker could not use the agent's brain: check that it is running/,
    );
    assert(!out.join("\n").includes("protocol error"), out.join("\n"));
  } finally {
    await service.close();
  }
});
