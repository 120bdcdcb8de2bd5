// A speculative turn's record (turn_record.ts): end_to_first_audio still runs from the caller's
// end of speech; brain and synthesis ran inside the window (audio_ready before end_of_turn), and
// release is what the caller waited after the window closed. A dropped one is no turn at all.
import { assertEquals } from "../../tests/helpers/assert.ts";
import { type LatencyStep, TurnLog } from "./turn_record.ts";

function observed(log: TurnLog): [LatencyStep, number][] {
  const seen: [LatencyStep, number][] = [];
  log.observer = { latency: (step, ms) => seen.push([step, ms]), interrupted: () => {} };
  return seen;
}

Deno.test("a confirmed speculative turn shows the brain and synthesis done inside the window", () => {
  const log = new TurnLog();
  const seen = observed(log);
  log.utteranceStarted(1000);
  log.utteranceMark("final_requested", 2160);
  log.utteranceMark("final_text", 2200);
  log.utteranceSpeculated("t1", "what time is it", 2205);
  log.mark("t1", "first_unit", 2305);
  log.mark("t1", "audio_ready", 2345);
  // Nothing is told while the turn may still be dropped.
  assertEquals(seen, []);
  assertEquals(log.records(), []);
  // The window closes 250 ms into the silence that began at 2000.
  log.utteranceMark("speech_ended", 2000);
  log.utteranceMark("end_of_turn", 2250 + 100);
  log.utteranceConfirmed("t1", 2350);
  log.mark("t1", "first_audio", 2360);
  const [r] = log.records();
  assertEquals(r.speculative, true);
  assertEquals(r.latency_ms, {
    end_of_turn: 350,
    release: 10,
    brain: 100,
    synthesis: 40,
    end_to_first_audio: 360,
    recognition: 40,
  });
  assertEquals(r.marks.audio_ready! < r.marks.end_of_turn!, true);
  assertEquals(new Map(seen).get("end_to_first_audio"), 360);
  assertEquals(seen.some(([step]) => step === "to_brain"), false);
});

Deno.test("a dropped speculative turn leaves the utterance going on and no record", () => {
  const log = new TurnLog();
  log.utteranceStarted(0);
  log.utteranceMark("final_text", 900);
  log.utteranceSpeculated("t1", "I was thinking", 910);
  log.mark("t1", "first_unit", 1000);
  log.speculationDropped("t1");
  log.utteranceMark("speech_ended", 3000);
  log.utteranceMark("end_of_turn", 3600);
  log.utteranceSent("t2", "I was thinking we could meet", 3605);
  const records = log.records();
  assertEquals(records.map((r) => [r.turn_id, r.speculative]), [["t2", undefined]]);
  // The turn began when the caller first spoke, before the dropped speculation.
  assertEquals(records[0].marks.speech_ended, 3000);
  assertEquals(log.record("t1"), undefined);
});
