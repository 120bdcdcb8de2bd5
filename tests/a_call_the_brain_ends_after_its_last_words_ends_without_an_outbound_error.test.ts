// The brain asks to end the call while the bot is still speaking: the call ends when the last
// frame of its words goes out, from inside the outbound audio's tick. The worker ends it cleanly:
// before, every such call printed "pacer tick failed: Error: OpusEncoder is closed" with a stack
// trace, the tick encoding that last frame with the encoder the call's end had just closed.
import { assert, assertEquals } from "./helpers/assert.ts";
import { startCallService } from "./helpers/call_harness.ts";
import { createBrain } from "../sdk/brain/mod.ts";

Deno.test("a call the brain ends after its last words ends without an outbound error", async () => {
  const brain = createBrain({
    onSessionStart: (session) => {
      // Asked while the greeting is being spoken: the call ends when its last frame goes out.
      setTimeout(() => session.end("said what it had to"), 300);
      return "Hello, this is a short call.";
    },
    onTurn: () => "",
  });
  const service = await startCallService(brain);
  try {
    const { sessionId } = await service.call();
    const record = await service.record(sessionId, "ended", 20_000);
    assertEquals(record.end_reason, "brain_ended");
    const log = record.log as { kind: string; data: unknown }[];
    assert(log.some((e) => e.kind === "end_requested"), "the end came while the bot spoke");
    await new Promise((r) => setTimeout(r, 300)); // the worker's output is read as it comes
    const output = service.worker.child.output();
    assert(!/pacer tick failed|OpusEncoder is closed/.test(output), output.slice(-2000));
  } finally {
    await service.close();
  }
});
