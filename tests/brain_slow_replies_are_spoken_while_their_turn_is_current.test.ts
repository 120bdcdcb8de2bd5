// A slow brain: no greeting within the greeting timeout (10 s) logs greeting_timeout and the
// call goes on listening; a reply whose first unit comes after the reply timeout logs
// reply_timeout. A late unit is spoken while its turn is still current, and dropped (Cancel sent)
// once the caller spoke in the meantime. The timeouts are shortened for all but one step.
import { assert, assertEquals } from "./helpers/assert.ts";
import { speech, startInProcessCallService } from "./helpers/call_harness.ts";
import { endedAs, kinds } from "./helpers/fault_checks.ts";
import { rawBrain, type RawBrainCall } from "./helpers/raw_brain.ts";
import { withBrainLimits } from "../media/brain/limits.ts";
import type { TestCaller } from "../caller/caller.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function completed(caller: TestCaller, text: string, ms = 15_000) {
  return caller.waitForMessage(
    (m) =>
      m.type === "bot-output" &&
      (m.data as { spoken_status: string }).spoken_status === "completed" &&
      (m.data as { text: string }).text === text,
    ms,
  );
}

Deno.test("a slow brain: late units are spoken while their turn is current", async (t) => {
  let plan: (call: RawBrainCall) => Promise<void> = () => Promise.resolve();
  const brain = rawBrain((call) => plan(call));
  const service = await startInProcessCallService(brain);
  try {
    await t.step("no greeting in 10 s: greeting_timeout, the call goes on listening", async () => {
      plan = async (call) => {
        await call.next("session_start");
        await call.next("user_turn", () => true, 30_000);
      };
      const { caller, sessionId } = await service.call();
      const call = await brain.callOf(sessionId);
      const start = await call.next("session_start");
      const timeout = await (async () => {
        for (;;) {
          const e = (await service.log(sessionId)).find((e) => e.kind === "greeting_timeout");
          if (e) return e;
          await sleep(200);
        }
      })();
      assertEquals(timeout.data, { after_ms: 10_000 });
      const waited = new Date(timeout.at).getTime() - start.timestamp_ms;
      assert(waited >= 9900 && waited < 11_500, `greeting_timeout after ${waited} ms`);
      // Listening: the caller's words become a turn.
      await caller.say(await speech("what is the weather like today"));
      await call.next("user_turn");
      await caller.hangUp();
      await endedAs(service, sessionId, "ended", "hangup");
    });

    await withBrainLimits({ greetingTimeoutMs: 1000, replyTimeoutMs: 1000 }, async () => {
      await t.step("a greeting after its timeout is spoken whole", async () => {
        plan = async (call) => {
          await call.next("session_start");
          await sleep(1600);
          call.send("greeting", { text: "Sorry I am late." });
        };
        const { caller, sessionId } = await service.call();
        await completed(caller, "Sorry I am late.");
        await caller.hangUp();
        const record = await endedAs(service, sessionId, "ended", "hangup");
        const log = record.log.map((e: { kind: string }) => e.kind);
        assert(log.indexOf("greeting_timeout") < log.indexOf("greeting"), log.join(" "));
        const greeting = record.timings.turns.find((x: { turn_id: string }) =>
          x.turn_id === "greeting"
        );
        assertEquals(greeting.units[0].heard, "Sorry I am late.");
        assertEquals(greeting.units[0].cut_off, false);
      });

      await t.step("a late greeting after the caller spoke is cancelled and dropped", async () => {
        plan = async (call) => {
          await call.next("session_start");
          const turn = await call.next("user_turn");
          await call.next("cancel", (f) => f.body.turn_id === "greeting", 1000);
          call.send("greeting", { text: "Welcome to the late show." });
          call.send("speech_unit", {
            turn_id: turn.body.turn_id,
            unit_id: "r1",
            text: "Sunny all day.",
            last: true,
          });
        };
        const { caller, sessionId } = await service.call();
        await sleep(1200); // past the greeting timeout: the caller has the floor
        await caller.say(await speech("what is the weather like today"));
        await completed(caller, "Sunny all day.");
        await caller.hangUp();
        const record = await endedAs(service, sessionId, "ended", "hangup");
        const dropped = record.log.find((e: { kind: string }) => e.kind === "unit_dropped");
        assertEquals(dropped.data, {
          turn_id: "greeting",
          unit_id: "greeting",
          reason: "cancelled",
        });
        const cancelled = record.log.find((e: { kind: string }) => e.kind === "turn_cancelled");
        assertEquals(cancelled.data, { turn_id: "greeting", reason: "superseded" });
        assert(
          !caller.messages.some((m) =>
            m.type === "bot-output" && (m.data as { text: string }).text.startsWith("Welcome")
          ),
          "the superseded greeting was never spoken",
        );
      });

      await t.step("a reply after its timeout is spoken; the call went on meanwhile", async () => {
        plan = async (call) => {
          await call.next("session_start");
          call.send("greeting", { text: "Hi." });
          const turn = await call.next("user_turn");
          await sleep(2000);
          call.send("speech_unit", {
            turn_id: turn.body.turn_id,
            unit_id: "r1",
            text: "Let me think. It is sunny.",
            last: true,
          });
        };
        const { caller, sessionId } = await service.call();
        await completed(caller, "Hi.");
        await caller.say(await speech("what is the weather like today"));
        await completed(caller, "Let me think. It is sunny.");
        await caller.hangUp();
        const record = await endedAs(service, sessionId, "ended", "hangup");
        const timeout = record.log.find((e: { kind: string }) => e.kind === "reply_timeout");
        assertEquals(timeout.data, { turn_id: "t1", after_ms: 1000 });
        const t1 = record.timings.turns.find((x: { turn_id: string }) => x.turn_id === "t1");
        assertEquals(t1.units[0].heard, "Let me think. It is sunny.");
        assertEquals(kinds(record.log, "to_brain").slice(-2), ["finalize", "end"]);
      });
    });
  } finally {
    await service.close();
  }
});
