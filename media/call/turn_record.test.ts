// A turn log tells its observer each latency once, when the later mark of the step is set, and
// each turn the caller cut off once; the record keeps the same figures.
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
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
  log.utteranceMark("final_requested", 2160);
  log.utteranceMark("final_text", 2230);
  log.utteranceMark("speech_ended", 2000);
  log.utteranceMark("end_of_turn", 2300);
  assertEquals(seen, [], "an utterance reports nothing until it is a turn");
  log.utteranceSent("t1", "hello", 2310);
  assertEquals(seen, [["end_of_turn", 300], ["to_brain", 10], ["recognition", 70]]);
  log.mark("t1", "first_unit", 2800);
  assertEquals(seen.at(-1), ["brain", 490]);
  log.mark("t1", "first_audio", 2900);
  assertEquals(seen.slice(-2), [["synthesis", 100], ["end_to_first_audio", 900]]);
  log.mark("t1", "first_audio", 3500); // marks are set once: nothing new
  log.mark("t1", "first_unit", 3600);
  assertEquals(seen.length, 6);

  const t1 = log.records().find((r) => r.turn_id === "t1")!;
  assertEquals(t1.latency_ms, {
    end_of_turn: 300,
    to_brain: 10,
    recognition: 70,
    brain: 490,
    synthesis: 100,
    end_to_first_audio: 900,
  });
});

Deno.test("a caller who pauses and goes on: the turn's marks are the last pause's, no step is negative", () => {
  const log = new TurnLog();
  const { seen } = observed(log);
  log.utteranceStarted(1000);
  // First pause: words finalized speculatively, then the caller goes on.
  log.utteranceMark("final_requested", 1660);
  log.utteranceMark("final_text", 1700);
  // Second pause: the speech ends at 2500, the turn at 2950.
  log.utteranceMark("final_requested", 2660);
  log.utteranceMark("final_text", 2720);
  log.utteranceMark("speech_ended", 2500);
  log.utteranceMark("end_of_turn", 2950);
  log.utteranceSent("t1", "one two", 2951);
  log.mark("t1", "first_unit", 3200);
  log.mark("t1", "first_audio", 3300);
  const t1 = log.records()[0];
  for (const [step, ms] of Object.entries(t1.latency_ms)) assert(ms >= 0, `${step}: ${ms}`);
  const l = t1.latency_ms;
  assertEquals(l.recognition, 60);
  assertEquals(l.end_of_turn! + l.to_brain! + l.brain! + l.synthesis!, l.end_to_first_audio);
  assertEquals(l.end_to_first_audio, 800);
  assertEquals(seen.filter(([s]) => s === "recognition").length, 1, "reported once, as a turn");
});

Deno.test("an utterance without words reports no latency", () => {
  const log = new TurnLog();
  const { seen } = observed(log);
  log.utteranceStarted(1000);
  log.utteranceMark("final_requested", 1400);
  log.utteranceMark("final_text", 1450);
  log.utteranceDropped();
  assertEquals(seen, []);
  assertEquals(log.records(), []);
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

Deno.test("the caller's own latency is kept once, on the speech turn whose reply has begun", () => {
  const log = new TurnLog();
  const { seen } = observed(log);
  log.open("greeting", "greeting", 0);
  log.mark("greeting", "first_audio", 100);
  assertEquals(log.heardAtCaller("latest", 300), false, "no speech turn yet");
  assertEquals(log.heardAtCaller("greeting", 300), false, "a greeting has no caller speech");

  log.utteranceStarted(1000);
  log.utteranceMark("speech_ended", 2000);
  log.utteranceSent("t1", "hello", 2100);
  assertEquals(log.heardAtCaller("latest", 450), false, "its reply has not played yet");
  log.mark("t1", "first_audio", 2400);
  for (const bad of [-1, 60_001, NaN, Infinity, "450" as unknown as number]) {
    assertEquals(log.heardAtCaller("t1", bad), false, `refuses ${bad}`);
  }
  assertEquals(log.heardAtCaller("t9", 450), false, "unknown turn");
  assertEquals(log.heardAtCaller("latest", 471.26), true);
  assertEquals(log.heardAtCaller("t1", 200), false, "a second report for the turn");
  assertEquals(seen.at(-1), ["heard_at_caller", 471.3]);

  log.utteranceStarted(3000);
  log.utteranceMark("speech_ended", 3500);
  log.utteranceSent("t2", "again", 3600);
  log.mark("t2", "first_audio", 3900);
  assertEquals(log.heardAtCaller("t2", 0), true, "0 is a value");

  const [, t1, t2] = log.records();
  assertEquals(t1.latency_ms.heard_at_caller, 471.3);
  assertEquals(t1.latency_ms.end_to_first_audio, 400, "the worker's own figure stays beside it");
  assertEquals(t2.latency_ms.heard_at_caller, 0);
  assertEquals(log.records()[0].latency_ms.heard_at_caller, undefined);
});

Deno.test("a typed turn is recorded as typed with its text, timed from when it was sent", () => {
  const log = new TurnLog();
  const { seen } = observed(log);
  log.utteranceStarted(900); // a caller's utterance in progress is not the typed turn's
  log.typedSent("t1", "order 42", 1000);
  log.mark("t1", "first_unit", 1300);
  log.mark("t1", "first_audio", 1380);
  assertEquals(
    seen,
    [["brain", 300], ["synthesis", 80], ["typed_to_first_audio", 380]],
    "no speech: no end-of-turn steps; the typed wait from the text to the first audio",
  );
  const t1 = log.records()[0];
  assertEquals(
    { trigger: t1.trigger, text: t1.user_text, marks: t1.marks, engines: t1.engines },
    {
      trigger: "typed",
      text: "order 42",
      marks: { typed_text: 0, user_turn_sent: 0, first_unit: 300, first_audio: 380 },
      engines: { synthesis: [] },
    },
  );
  assertEquals(t1.latency_ms.typed_to_first_audio, 380);
  assertEquals(log.heardAtCaller("t1", 400), false, "the caller's heard figure is for speech");
  log.utteranceSent("t2", "hello", 2000);
  assertEquals(log.records()[1].marks.user_turn_sent, 1100, "the utterance kept its own start");
});

Deno.test("a typed text held back by the caller's utterance is timed from its arrival", () => {
  const log = new TurnLog();
  observed(log);
  log.utteranceStarted(900);
  log.typedArrived("  order 42 ", 1000); // the caller is still speaking: the text waits
  log.typedArrived("never taken", 1050); // refused before it became a turn: never claimed
  log.utteranceSent("t1", "hello", 1400);
  log.typedSent("t2", "order 42", 1600);
  log.mark("t2", "first_unit", 1900);
  log.mark("t2", "first_audio", 1980);
  const t2 = log.records()[1];
  assertEquals(t2.marks, { typed_text: 0, user_turn_sent: 600, first_unit: 900, first_audio: 980 });
  assertEquals(t2.latency_ms.typed_to_first_audio, 980, "the wait for the floor is in it");
  assertEquals(t2.latency_ms.brain, 300);
  for (let i = 0; i < 20; i++) log.typedArrived(`refused ${i}`, 2000 + i);
  log.typedSent("t3", "order 43", 3000);
  assertEquals(log.records()[2].marks.typed_text, 0, "unknown text: it begins when sent");
});
