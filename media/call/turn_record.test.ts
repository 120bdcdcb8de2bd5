// A turn log tells its observer each latency once, when the later mark of the step is set, and
// each turn the caller cut off once; the record keeps the same figures.
import { assertEquals } from "../../tests/helpers/assert.ts";
import { type LatencyStep, TurnLog } from "./turn_record.ts";

function observed(log: TurnLog) {
  const seen: [LatencyStep, number][] = [];
  let interrupted = 0;
  log.observer = {
    latency: (step, ms) => seen.push([step, ms]),
    interrupted: () => interrupted++,
  };
  return { seen, interrupted: () => interrupted };
}

Deno.test("the turn log tells its observer each latency as its step completes, once", () => {
  const log = new TurnLog();
  const { seen } = observed(log);
  log.open("greeting", "greeting", 0);
  log.mark("greeting", "first_unit", 100);
  log.mark("greeting", "first_audio", 150);
  assertEquals(seen, [["synthesis", 50]], "a greeting has no speech, so only synthesis");

  seen.length = 0;
  log.utteranceStarted(1000, 200);
  log.utteranceMark("speech_ended", 2000);
  assertEquals(seen, []);
  log.utteranceMark("final_text", 2300);
  assertEquals(seen, [["recognition", 300]]);
  log.utteranceSent("t1", "hello", 2310);
  assertEquals(seen.at(-1), ["to_brain", 310]);
  log.mark("t1", "first_unit", 2800);
  assertEquals(seen.at(-1), ["brain", 490]);
  log.mark("t1", "first_audio", 2900);
  assertEquals(seen.slice(-2), [["synthesis", 100], ["end_to_first_audio", 900]]);
  log.mark("t1", "first_audio", 3500); // marks are set once: nothing new
  log.mark("t1", "first_unit", 3600);
  assertEquals(seen.length, 5);

  const t1 = log.records().find((r) => r.turn_id === "t1")!;
  assertEquals(t1.latency_ms, {
    recognition: 300,
    to_brain: 310,
    brain: 490,
    synthesis: 100,
    end_to_first_audio: 900,
  });
});

Deno.test("the turn log tells its observer of each cut-off turn once", () => {
  const log = new TurnLog();
  const o = observed(log);
  log.open("greeting", "greeting", 0);
  log.interrupted("greeting");
  log.interrupted("greeting");
  log.interrupted("t9"); // no such turn
  assertEquals(o.interrupted(), 1);
  assertEquals(log.records()[0].interrupted, true);
});

Deno.test("a turn log without an observer records the same figures", () => {
  const log = new TurnLog();
  log.open("t1", "idle", 0);
  log.mark("t1", "user_turn_sent", 0);
  log.mark("t1", "first_unit", 40);
  log.interrupted("t1");
  assertEquals(log.records()[0].latency_ms, { brain: 40 });
});
