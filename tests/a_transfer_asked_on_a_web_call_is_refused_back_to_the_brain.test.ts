// A brain asking to transfer a web call: there is no phone line to hand on, so the worker refuses
// it back to the brain (TransferFailed saying so), logs the refusal, and the call goes on.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { startCallService, waitForLog } from "./helpers/call_harness.ts";
import { createBrain } from "../sdk/brain/mod.ts";

Deno.test("a Transfer on a web call comes back as TransferFailed and the call goes on", async () => {
  const failures: string[] = [];
  let phone: unknown = "unset";
  const brain = createBrain({
    onSessionStart(session) {
      phone = session.phone;
      setTimeout(() => session.transfer("tel:+14155550199"), 0);
      return "Hello.";
    },
    onTurn: () => {},
    onTransferFailed: (f) => void failures.push(f.detail),
  });
  const service = await startCallService(brain);
  try {
    const { caller, sessionId } = await service.call();
    const refused = await waitForLog(
      service,
      sessionId,
      (e) => e.source === "worker" && e.kind === "transfer_refused",
    );
    assertMatch(refused.data.detail, /web call/);
    for (let i = 0; i < 100 && failures.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    assertEquals(failures, [refused.data.detail]);
    assertEquals(phone, null, "a web call's SessionStart has no phone");
    // Still up: the page hangs up, not the transfer.
    await caller.hangUp();
    const record = await service.record(sessionId, "ended");
    assertEquals(record.end_reason, "hangup");
    assert(!record.log.some((e: { kind: string }) => e.kind === "transferred"));
  } finally {
    await service.close();
  }
});
