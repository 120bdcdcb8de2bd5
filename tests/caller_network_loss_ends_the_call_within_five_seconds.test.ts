// A caller whose network goes away — not a hang-up, not just missing pings: every packet it
// would send or receive is dropped (RTP, RTCP, DTLS, SCTP, STUN alike) — is hung up within 5 s
// as ended/no_ping, and the brain is told (Finalize, End). A caller whose microphone keeps
// sending but who sends no pings is alive and is not hung up.
import { assert, assertEquals } from "./helpers/assert.ts";
import { startInProcessCallService } from "./helpers/call_harness.ts";
import { endedAs } from "./helpers/fault_checks.ts";
import { rawBrain } from "./helpers/raw_brain.ts";
import type { TestCaller } from "../caller/caller.ts";

interface UdpTransportLike {
  send: (...args: unknown[]) => Promise<void>;
  onData: (...args: unknown[]) => void;
}

/** The caller's network is gone: its ICE transports' sockets neither send nor deliver anything. */
function dropAllPackets(caller: TestCaller): void {
  let transports = 0;
  for (const ice of caller.pc.iceTransports) {
    // werift keeps these private; the sockets under ICE carry every packet of the connection.
    const protocols =
      (ice.connection as unknown as { protocols: { transport: UdpTransportLike }[] })
        .protocols;
    for (const { transport } of protocols) {
      transport.send = () => Promise.resolve();
      transport.onData = () => {};
      transports++;
    }
  }
  assert(transports > 0, "no ICE transport to cut");
}

Deno.test("caller network loss ends the call within 5 s; audio without pings does not", async (t) => {
  const brain = rawBrain(async (call) => {
    await call.next("session_start");
    call.send("greeting", { text: "Hello." });
  });
  const service = await startInProcessCallService(brain);
  try {
    await t.step("every packet dropped: ended/no_ping within 5 s", async () => {
      const { caller, sessionId } = await service.call();
      await caller.waitForMessage((m) => m.type === "bot-stopped-speaking", 15_000);
      const lostAt = performance.now();
      dropAllPackets(caller);
      const call = service.context.calls.get(sessionId)!;
      await call.ended;
      const ms = performance.now() - lostAt;
      console.log(`network loss: the call ended ${ms.toFixed(0)} ms after the last packet`);
      assert(ms < 5000, `the call ended ${ms.toFixed(0)} ms after the network went`);
      const record = await endedAs(service, sessionId, "ended", "no_ping");
      const brainCall = await brain.callOf(sessionId);
      assertEquals((await brainCall.next("end")).body.reason, "no_ping");
      assertEquals(await brainCall.closed, 1000);
      assertEquals(
        record.log.filter((e: { source: string }) => e.source === "to_brain").slice(-2)
          .map((e: { kind: string }) => e.kind),
        ["finalize", "end"],
      );
      await caller.hangUp();
    });

    await t.step("audio keeps coming, no pings: the call goes on", async () => {
      const { caller, sessionId } = await service.callAs(service.tenant, {}, {
        pingIntervalMs: 3_600_000, // the page's pings never come
      });
      await caller.waitForMessage((m) => m.type === "bot-stopped-speaking", 15_000);
      await new Promise((r) => setTimeout(r, 5000)); // past the 3 s liveness window
      assertEquals(caller.pingsSent, 0);
      assert(service.context.calls.has(sessionId), "a caller still sending audio was hung up");
      assertEquals((await service.record(sessionId)).status, "active");
      await caller.hangUp();
      await endedAs(service, sessionId, "ended", "hangup");
    });
  } finally {
    await service.close();
  }
});
