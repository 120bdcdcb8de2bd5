// Barge-in: the caller speaks over a long reply. The bot's audio stops within 100 ms of the
// caller's speech onset as the service detects it (the VAD's barge-in window after the audio's
// onset), the brain gets Cancel for the turn, and Heard for the cut unit is a strict prefix.
import { assert, assertEquals } from "./helpers/assert.ts";
import {
  botSilentAt,
  speech,
  speechOnsetMs,
  startCallService,
  storyWellUnderWay,
  waitForLog,
} from "./helpers/call_harness.ts";
import { createExampleBrain } from "../sdk/brain/example/brain.ts";

Deno.test("barge-in stops the bot's audio, cancels the turn and reports what was heard", async () => {
  const service = await startCallService(createExampleBrain());
  try {
    const { caller, sessionId } = await service.call();
    await storyWellUnderWay(caller);

    const words = await speech("stop, wait a moment");
    const { startedAt: sentAt } = await caller.say(words);
    // The speech's true onset: the first 10 ms of the sent audio that is not silence.
    const onsetMs = speechOnsetMs(words);
    const startedAt = sentAt + onsetMs;
    const cancel = await waitForLog(
      service,
      sessionId,
      (e) => e.source === "to_brain" && e.kind === "cancel",
    );
    const bargeIn = await waitForLog(service, sessionId, (e) => e.kind === "barge_in");
    assertEquals(cancel.data.turn_id, bargeIn.data.turn_id);

    // The first silent frame after the caller's onset: the bot stopped there.
    const stoppedAt = botSilentAt(caller, startedAt);
    assert(stoppedAt !== undefined, "the bot's audio never stopped");
    const stopMs = stoppedAt - startedAt;
    const windowMs = bargeIn.data.window_ms as number;
    // Measured from the onset the service detects: the onset plus its barge-in window.
    assert(
      stopMs - windowMs <= 100,
      `bot stopped ${stopMs.toFixed(0)} ms after the caller's onset (window ${windowMs} ms, ` +
        `speech began ${onsetMs} ms into the audio)`,
    );

    const heard = await waitForLog(
      service,
      sessionId,
      (e) => e.source === "to_brain" && e.kind === "heard" && e.data.cut_off === true,
    );
    const units = (await service.log(sessionId)).filter((e) =>
      e.source === "from_brain" && e.kind === "speech_unit" && e.data.unit_id === heard.data.unit_id
    );
    const unitText: string = units[0].data.text;
    assert(
      unitText.startsWith(heard.data.text) && heard.data.text.length < unitText.length,
      `heard "${heard.data.text}" is not a strict prefix of "${unitText}"`,
    );
    // Later units of the cancelled turn are not spoken.
    const record = await (async () => {
      await caller.hangUp();
      return await service.record(sessionId, "ended");
    })();
    const story = record.timings.turns.find((t: { interrupted: boolean }) => t.interrupted);
    assert(story, "no turn marked interrupted");
    assert(story.units.some((u: { cut_off: boolean }) => u.cut_off));
  } finally {
    await service.close();
  }
});
