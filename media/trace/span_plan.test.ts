// A turn's spans are planned from a turn log fed the call's events as a call feeds it: each step
// span lies between the two marks the session record measures it by, so its length is the
// record's latency, and a step whose marks were not both set has no span.
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { TurnLog } from "../call/turn_record.ts";
import { planTurn } from "./span_plan.ts";

/** A recorded call: a greeting, a spoken turn, a typed turn cut off before any audio. */
function recordedCall(): TurnLog {
  const log = new TurnLog();
  log.open("greeting", "greeting", 0);
  log.mark("greeting", "first_unit", 100);
  log.mark("greeting", "first_audio", 150);
  log.mark("greeting", "done", 900);
  log.utteranceStarted(1000, 200);
  log.utteranceMark("final_requested", 2160);
  log.utteranceMark("final_text", 2230);
  log.utteranceMark("speech_ended", 2000);
  log.utteranceMark("end_of_turn", 2300);
  log.utteranceRecognisedBy("pocketsphinx");
  log.utteranceSent("t1", "hello", 2310);
  log.mark("t1", "first_unit", 2800);
  log.mark("t1", "first_audio", 2900);
  log.unitDone("t1", {
    unit_id: "u1",
    text: "Hi.",
    heard: "Hi.",
    cut_off: false,
    engine: "espeak",
  });
  log.mark("t1", "done", 3400);
  log.typedArrived("stop", 4000);
  log.typedSent("t2", "stop", 4005);
  log.interrupted("t2");
  return log;
}

const names = (p: ReturnType<typeof planTurn>) => p.steps.map((s) => s.name);

Deno.test("a spoken turn: its five steps and the wait for the first packet, timed by the record's marks", () => {
  const record = recordedCall().record("t1")!;
  const plan = planTurn(record, "ses_1");
  const t0 = Date.parse(record.started_at);
  assertEquals(plan.turn.name, "turn");
  assertEquals(plan.turn.startMs, t0);
  assertEquals(plan.turn.endMs - t0, record.marks.done);
  assertEquals(names(plan), [
    "turn.end_of_turn",
    "turn.to_brain",
    "turn.brain",
    "turn.synthesis",
    "turn.recognition",
    "turn.first_packet",
  ]);
  const length = Object.fromEntries(plan.steps.map((s) => [s.name.slice(5), s.endMs - s.startMs]));
  for (const step of ["end_of_turn", "to_brain", "brain", "synthesis", "recognition"] as const) {
    assert(Math.abs(length[step] - record.latency_ms[step]!) < 1e-6, step);
  }
  assertEquals(length.first_packet, record.latency_ms.end_to_first_audio);
  // The chain follows on: each step starts where the one before it ended.
  const chain = plan.steps.slice(0, 4);
  for (let i = 1; i < chain.length; i++) assertEquals(chain[i].startMs, chain[i - 1].endMs);
  assertEquals(
    plan.steps.find((s) => s.name === "turn.recognition")!.attributes["voice.engine"],
    "pocketsphinx",
  );
  assertEquals(
    plan.steps.find((s) => s.name === "turn.synthesis")!.attributes["voice.engine"],
    "espeak",
  );
  assertEquals(plan.turn.attributes["voice.session_id"], "ses_1");
  assertEquals(plan.turn.attributes["voice.turn_id"], "t1");
  assertEquals(plan.turn.attributes["voice.turn.trigger"], "speech");
  assertEquals(plan.turn.attributes["voice.latency_ms.brain"], 490);
  assert(
    !Object.values(plan.turn.attributes).includes("hello"),
    "the caller's words are not in a span",
  );
});

Deno.test("a greeting has only what it measured; a typed turn cut before audio has no first packet", () => {
  const log = recordedCall();
  const greeting = planTurn(log.record("greeting")!, "ses_1");
  assertEquals(names(greeting), ["turn.synthesis", "turn.first_packet"]);
  assertEquals(greeting.steps[1].endMs - greeting.steps[1].startMs, 150, "from the turn's start");

  const typed = planTurn(log.record("t2")!, "ses_1");
  assertEquals(names(typed), []);
  assertEquals(typed.turn.attributes["voice.turn.trigger"], "typed");
  assertEquals(typed.turn.attributes["voice.turn.interrupted"], true);
  assertEquals(typed.turn.endMs - typed.turn.startMs, 5, "to its last mark: sent to the brain");
});

Deno.test("a speculative turn's spans run forward: release after the end of turn, no to_brain", () => {
  const log = new TurnLog();
  log.utteranceStarted(1000);
  log.utteranceMark("final_requested", 2160);
  log.utteranceMark("final_text", 2200);
  log.utteranceSpeculated("t1", "I would like to check my order", 2205);
  log.mark("t1", "first_unit", 2250);
  log.mark("t1", "audio_ready", 2300);
  log.utteranceMark("speech_ended", 2000);
  log.utteranceMark("end_of_turn", 2585);
  log.utteranceConfirmed("t1", 2585);
  log.mark("t1", "first_audio", 2590);
  const plan = planTurn(log.record("t1")!, "s1");
  const names = plan.steps.map((s) => s.name);
  assertEquals(names.includes("turn.to_brain"), false, names.join(" "));
  assert(names.includes("turn.release"), names.join(" "));
  for (const s of plan.steps) assert(s.endMs >= s.startMs, `${s.name} runs backwards`);
});
