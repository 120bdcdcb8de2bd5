// A brain turns speculative turns on with its own Config (no sessions.connect config), and answers
// only once the turn is confirmed: its speculative UserTurn comes at the caller's pause, then
// TurnConfirmed when the end-of-turn window closes, and the reply timer runs from there. "maybe"
// hangs: its words go at 1 s of silence and its window closes at 2 s, twice the shortened reply
// timeout (0.5 s) apart: a timer started at the speculative send would have fired while the turn
// was only held.
import { assert, assertEquals } from "./helpers/assert.ts";
import { speech, startInProcessCallService } from "./helpers/call_harness.ts";
import { endedAs } from "./helpers/fault_checks.ts";
import { rawBrain } from "./helpers/raw_brain.ts";
import { withBrainLimits } from "../media/brain/limits.ts";

Deno.test("a brain's Config turns speculation on, and its reply timer starts at the confirmation", async () => {
  const brain = rawBrain(async (call) => {
    await call.next("session_start");
    call.send("config", { turns: { speculative: true } });
    call.send("greeting", { text: "Hi." });
    const turn = await call.next("user_turn", (f) => f.body.speculative === true, 30_000);
    await call.next("turn_confirmed", (f) => f.body.turn_id === turn.body.turn_id, 30_000);
    await new Promise((r) => setTimeout(r, 250)); // within the timeout, counted from here
    call.send("speech_unit", {
      turn_id: turn.body.turn_id,
      unit_id: "r1",
      text: "Friday works.",
      last: true,
    });
  });
  const service = await startInProcessCallService(brain);
  try {
    await withBrainLimits({ replyTimeoutMs: 500 }, async () => {
      const { caller, sessionId } = await service.call();
      await caller.waitForMessage((m) => m.type === "bot-stopped-speaking", 15_000);
      await caller.say(await speech("so I was thinking that maybe"));
      await caller.waitForMessage(
        (m) =>
          m.type === "bot-output" &&
          (m.data as { spoken_status: string }).spoken_status === "completed" &&
          (m.data as { text: string }).text === "Friday works.",
        15_000,
      );
      await caller.hangUp();
      const record = await endedAs(service, sessionId, "ended", "hangup");
      const log = record.log as { source: string; kind: string; data: Record<string, unknown> }[];
      const applied = log.find((e) => e.kind === "config_applied");
      assertEquals((applied?.data.changed as string[]) ?? [], ["turns.speculative"]);
      const speculative = log.filter((e) => e.kind === "turn_speculative");
      const confirmed = log.filter((e) => e.kind === "turn_confirmed" && e.source === "worker");
      assertEquals(speculative.length, 1, JSON.stringify(log.map((e) => e.kind)));
      assertEquals(confirmed.map((e) => e.data), [{
        turn_id: speculative[0].data.turn_id,
        units: 0,
      }]);
      assertEquals(log.filter((e) => e.kind === "reply_timeout"), []);
      const heard = log.find((e) =>
        e.source === "to_brain" && e.kind === "heard" &&
        e.data.turn_id === speculative[0].data.turn_id
      );
      assertEquals([heard?.data.text, heard?.data.cut_off], ["Friday works.", false]);
      assert(log.indexOf(confirmed[0]) < log.indexOf(heard!), "heard before the confirmation");
    });
  } finally {
    await service.close();
  }
});
