// A brain that sends what is not the protocol fails the call, named: random bytes or a text
// frame → failed/brain_protocol_error; a frame over 64 KiB → failed/brain_frame_too_large,
// refused from its header. Either way the brain still gets Finalize and End (with the reason),
// then a close saying why (1002, 1009); the page gets a fatal error; the log has the offending
// frame and the end. A frame of exactly 64 KiB is a frame like any other.
import { assert, assertEquals } from "./helpers/assert.ts";
import { startInProcessCallService } from "./helpers/call_harness.ts";
import { endedAs, kinds, pageToldFatal } from "./helpers/fault_checks.ts";
import { brainFrameBytes, rawBrain, type RawBrainCall } from "./helpers/raw_brain.ts";

/** Deterministic bytes (a linear congruential generator), so a failure can be replayed. */
function randomBytes(n: number, seed: number): Uint8Array {
  const out = new Uint8Array(n);
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

Deno.test("garbage or oversized frames from the brain fail the call, named", async (t) => {
  let plan: (call: RawBrainCall) => Promise<void> = () => Promise.resolve();
  const brain = rawBrain(async (call) => {
    await call.next("session_start");
    call.send("greeting", { text: "Hi." });
    await plan(call);
  });
  const service = await startInProcessCallService(brain);

  const faulty = async (
    send: (call: RawBrainCall) => void,
    reason: string,
    closeCode: number,
  ) => {
    plan = async (call) => {
      await call.next("heard", (f) => f.body.unit_id === "greeting");
      send(call);
    };
    const { caller, sessionId } = await service.call();
    await pageToldFatal(caller);
    const record = await endedAs(service, sessionId, "failed", reason);
    const call = await brain.callOf(sessionId);
    assertEquals(await call.closed, closeCode);
    // Finalize and End still reached the brain, End naming the reason.
    const end = await call.next("end");
    assertEquals(end.body.reason, reason);
    assertEquals(call.frames.slice(-2).map((f) => f.kind), ["finalize", "end"]);
    assertEquals(kinds(record.log, "to_brain").slice(-2), ["finalize", "end"]);
    await caller.hangUp();
    return record;
  };

  try {
    await t.step("random bytes: failed/brain_protocol_error", async () => {
      const record = await faulty(
        (call) => call.sendRaw(randomBytes(200, 42)),
        "brain_protocol_error",
        1002,
      );
      const bad = record.log.find((e: { kind: string }) => e.kind === "undecodable");
      assertEquals([bad.source, bad.data], ["from_brain", { bytes: 200 }]);
    });

    await t.step("a text frame: failed/brain_protocol_error", async () => {
      const record = await faulty(
        (call) => call.sendRaw('{"greeting":"hello"}'),
        "brain_protocol_error",
        1002,
      );
      assert(record.log.some((e: { kind: string }) => e.kind === "text_frame"));
    });

    await t.step("a frame over 64 KiB: failed/brain_frame_too_large", async () => {
      const frame = brainFrameBytes("speech_unit", {
        turn_id: "greeting",
        unit_id: "huge",
        text: "word ".repeat(20_000),
        last: true,
      });
      assert(frame.length > 64 * 1024);
      const record = await faulty((call) => call.sendRaw(frame), "brain_frame_too_large", 1009);
      const big = record.log.find((e: { kind: string }) => e.kind === "frame_too_large");
      assertEquals([big.source, big.data], ["from_brain", { bytes: frame.length, limit: 65536 }]);
      assert(!record.log.some((e: { data: { unit_id?: string } }) => e.data?.unit_id === "huge"));
    });

    await t.step(
      "a frame of exactly 64 KiB is accepted (its unit then meets the queue cap)",
      async () => {
        const body = (text: string) => ({ turn_id: "greeting", unit_id: "big", text, last: true });
        // The text length that makes the whole frame 65,536 bytes (length varints grow with it).
        let n = 65536;
        while (brainFrameBytes("speech_unit", body("x".repeat(n))).length > 65536) n--;
        const frame = brainFrameBytes("speech_unit", body("x".repeat(n)));
        assertEquals(frame.length, 65536);
        plan = async (call) => {
          await call.next("heard", (f) => f.body.unit_id === "greeting");
          call.sendRaw(frame);
        };
        const { caller, sessionId } = await service.call();
        const call = await brain.callOf(sessionId);
        // The call goes on: the unit was read and refused by the speech queue, not the socket.
        for (;;) {
          const log = await service.log(sessionId);
          const refused = log.find((e) => e.kind === "unit_refused");
          if (refused) {
            assertEquals(refused.data.reason, "queue_full");
            break;
          }
          await new Promise((r) => setTimeout(r, 100));
        }
        assert(call.open, "the brain socket is still open");
        await caller.hangUp();
        await endedAs(service, sessionId, "ended", "hangup");
        assertEquals(await call.closed, 1000);
      },
    );
  } finally {
    await service.close();
  }
});
