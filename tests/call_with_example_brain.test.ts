// A whole call with the example brain, through the real service: the greeting arrives as audio,
// the caller's sentence reaches the brain as UserTurn text close to the script, the reply is
// heard, and at hang-up the brain gets Finalize then End; the record keeps turns and usage.
import { assert, assertEquals } from "./helpers/assert.ts";
import {
  assertTurnLatenciesAddUp,
  botAudioAfter,
  speech,
  startCallService,
  waitForLog,
} from "./helpers/call_harness.ts";
import { createExampleBrain } from "../sdk/brain/example/brain.ts";
import { wordErrorRate } from "../media/stt/wer.ts";

const SCRIPT = "what is the weather like today";

Deno.test("a call with the example brain: greeting, a turn, a reply, finalize then end", async () => {
  const service = await startCallService(createExampleBrain());
  try {
    const readyAt = performance.now();
    const { caller, sessionId } = await service.call();

    // The greeting is spoken: the caller hears the bot's voice, and the page is told.
    await caller.waitForMessage((m) => m.type === "bot-started-speaking", 15_000);
    await new Promise((r) => setTimeout(r, 300));
    assert(botAudioAfter(caller, readyAt) !== undefined, "the greeting was not heard");
    await caller.waitForMessage((m) => m.type === "bot-stopped-speaking", 15_000);

    const said = await caller.say(await speech(SCRIPT));
    const turn = await waitForLog(
      service,
      sessionId,
      (e) => e.source === "to_brain" && e.kind === "user_turn",
    );
    const wer = wordErrorRate(SCRIPT, turn.data.text);
    assert(wer <= 0.5, `UserTurn "${turn.data.text}" is far from "${SCRIPT}" (WER ${wer})`);
    const final = await caller.waitForMessage(
      (m) => m.type === "user-transcription" && (m.data as { final: boolean }).final,
    );
    assertEquals((final.data as { text: string }).text, turn.data.text);

    // The reply: bot output naming what was heard, and audio after the caller stopped.
    const output = await caller.waitForMessage(
      (m) =>
        m.type === "bot-output" &&
        String((m.data as { text: string }).text).startsWith("You said"),
      15_000,
    );
    assert(output);
    const played = await caller.waitForMessage(
      (m) =>
        m.type === "bot-output" &&
        (m.data as { spoken_status: string }).spoken_status === "completed" &&
        String((m.data as { text: string }).text).startsWith("You said"),
      15_000,
    );
    const progress = (played.data as { spoken_progress: { remaining_text: string } })
      .spoken_progress;
    assertEquals(progress.remaining_text, "", "the reply was played out whole");
    assert(botAudioAfter(caller, said.endedAt) !== undefined, "the reply was not heard");

    await caller.hangUp();
    const record = await service.record(sessionId, "ended");
    assertEquals(record.end_reason, "hangup");

    // Finalize, then End, the last two frames to the brain.
    const toBrain = record.log.filter((e: { source: string }) => e.source === "to_brain");
    assertEquals(toBrain.slice(-2).map((e: { kind: string }) => e.kind), ["finalize", "end"]);
    assert(toBrain.at(-2).data.seq < toBrain.at(-1).data.seq);
    const finalHeard = toBrain.at(-2).data.heard.map((h: { text: string }) => h.text);
    assert(finalHeard.some((t: string) => t.startsWith("You said")), String(finalHeard));
    assertEquals(toBrain[0].kind, "session_start");

    // Turns with their latencies; usage of recognition and synthesis.
    const turns = record.timings.turns;
    assertEquals(turns[0].turn_id, "greeting");
    const t1 = turns.find((t: { turn_id: string }) => t.turn_id === "t1");
    assertEquals(t1.user_text, turn.data.text);
    for (const k of ["recognition", "to_brain", "brain", "synthesis", "end_to_first_audio"]) {
      assert(typeof t1.latency_ms[k] === "number", `turn lacks ${k}: ${JSON.stringify(t1)}`);
    }
    // Local engines: no step is negative and the steps add up to the end-to-end figure.
    for (const t of turns.filter((t: { trigger: string }) => t.trigger === "speech")) {
      assertTurnLatenciesAddUp(t);
    }
    assert(t1.units.length >= 1 && t1.units[0].cut_off === false);
    assert(record.usage.recognised_seconds > 0.5, JSON.stringify(record.usage));
    assert(record.usage.synthesized_characters > 40, JSON.stringify(record.usage));
    // Which engine served each leg, per turn and in usage.
    assertEquals(t1.engines.recognition, "pocketsphinx");
    assertEquals(t1.engines.synthesis, ["espeak-ng"]);
    assertEquals(t1.units[0].engine, "espeak-ng");
    assertEquals(
      record.usage.by_engine.pocketsphinx.recognised_seconds,
      record.usage.recognised_seconds,
    );
    assert(record.usage.by_engine["espeak-ng"].synthesized_characters > 40);
  } finally {
    await service.close();
  }
});
