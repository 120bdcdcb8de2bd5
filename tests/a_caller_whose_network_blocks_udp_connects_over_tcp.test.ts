// A caller whose network blocks UDP (many offices) still reaches the worker, directly over ICE-TCP
// (RFC 6544): the worker's answer carries a passive TCP candidate on its ICE address, the caller
// connects to it, the call starts and the greeting is heard. Before, the answer had one UDP host
// candidate and such a caller's ICE failed (issue 25: `failed`/`connect_timeout`).
import { assert, assertEquals } from "./helpers/assert.ts";
import { startInProcessCallService } from "./helpers/call_harness.ts";
import { rawBrain } from "./helpers/raw_brain.ts";

interface Nominated {
  nominated?: { localCandidate: { transport: string }; remoteCandidate: { tcptype?: string } };
}

Deno.test("a caller whose network blocks UDP connects over TCP and hears the greeting", async () => {
  const brain = rawBrain(async (call) => {
    await call.next("session_start");
    call.send("greeting", { text: "Hello over TCP." });
  });
  const service = await startInProcessCallService(brain);
  try {
    const { caller, sessionId } = await service.callAs(service.tenant, {}, { udpBlocked: true });
    await caller.waitForMessage((m) => m.type === "bot-stopped-speaking", 15_000);
    const pair = (caller.pc.iceTransports[0].connection as unknown as Nominated).nominated;
    assertEquals(pair?.localCandidate.transport.toLowerCase(), "tcp");
    assertEquals(pair?.remoteCandidate.tcptype, "passive");
    const heard = caller.heardFrames.filter((f) => f.rms > 200).length;
    assert(heard > 10, `only ${heard} loud frames of the greeting arrived`);
    await caller.hangUp();
    const record = await service.record(sessionId, "ended", 10_000);
    assertEquals(record.end_reason, "hangup");
  } finally {
    await service.close();
  }
});
