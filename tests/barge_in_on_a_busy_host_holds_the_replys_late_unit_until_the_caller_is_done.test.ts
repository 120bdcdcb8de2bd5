// Barge-in on a busy host (issue 31). The reply's first unit has played out and its next one is
// late (a streamed reply running behind, which a loaded node makes likely): the caller speaks over
// the bot in that gap. The pause must hold the unit that comes during the overlap, so the caller
// hears nothing of the bot from their onset until their words are over, and the brain is told
// nothing of the late unit was heard. Two busy loops load the host for the whole overlap; the
// figures are the audio the caller received, 20 ms frame by 20 ms frame.
//
// Before the fix the pause found nothing queued and held nothing (bot_paused was logged, no
// bot_resumed), and the late unit played over the caller until the Cancel.
import { assert, assertEquals } from "./helpers/assert.ts";
import {
  NOISE_AT_MS,
  noiseThenWords,
  speech,
  speechEndMs,
  startInProcessCallService,
  waitForLog,
} from "./helpers/call_harness.ts";
import { busyLoops } from "./helpers/busy_host.ts";
import { createBrain } from "../sdk/brain/mod.ts";

const FIRST = "Once upon a time, a small robot lived in a lighthouse.";
const LATE = "Every night it counted the ships that passed and wished one of them would stop.";

Deno.test("on a busy host a reply's unit that comes while the caller speaks over the bot is held until the cut", async () => {
  let firstPlayed!: () => void;
  const firstDone = new Promise<void>((r) => firstPlayed = r);
  let sendLate!: () => void;
  const lateWanted = new Promise<void>((r) => sendLate = r);
  const brain = createBrain({
    onSessionStart: () => "Hello.",
    async *onTurn(turn) {
      // Only the first turn is answered: no later reply can be mistaken for the held one.
      if (turn.id !== "t1") return;
      yield FIRST;
      await lateWanted; // the next unit comes only once the caller is speaking over the bot
      if (!turn.signal.aborted) yield LATE;
    },
    onHeard: (h) => {
      if (h.unitId === "t1.1") firstPlayed();
    },
  });
  const service = await startInProcessCallService(brain);
  let load: { stop(): Promise<void> } | undefined;
  try {
    const { caller, sessionId } = await service.call();
    await caller.waitForMessage((m) => m.type === "bot-stopped-speaking", 15_000);
    // The late unit is sent the moment the worker pauses the bot (its session log, in process).
    const call = service.context.calls.get(sessionId)!;
    const add = call.log.add.bind(call.log);
    call.log.add = (source, kind, data) => {
      add(source, kind, data);
      if (kind === "bot_paused") sendLate();
    };
    await caller.say(await speech("please tell me a story"));
    await firstDone;

    load = busyLoops(2);
    const audio = await noiseThenWords("stop please, thank you");
    const { startedAt } = await caller.say(audio);
    const bargeIn = await waitForLog(service, sessionId, (e) => e.kind === "barge_in", 30_000);
    assertEquals(bargeIn.data.turn_id, "t1");
    const endOfWords = startedAt + speechEndMs(audio);
    await new Promise((r) => setTimeout(r, Math.max(0, endOfWords - performance.now()) + 1000));
    await load.stop();
    load = undefined;

    const log = await service.log(sessionId);
    const kinds = log.filter((e) => e.source === "worker").map((e) => e.kind);
    assert(kinds.includes("bot_paused"), `the bot was never paused: ${kinds.join(" ")}`);
    assert(
      log.some((e) => e.source === "from_brain" && e.data?.text === LATE),
      "the late unit never reached the worker during the overlap",
    );
    // From the caller's onset until a second after their words: not one loud frame of the bot.
    const onsetAt = startedAt + NOISE_AT_MS;
    const back = caller.heardFrames.filter((f) =>
      f.at >= onsetAt && f.at <= endOfWords + 1000 && f.rms > 300
    );
    assert(
      back.length === 0,
      `the bot came back for ${back.length} frames, the first ${
        ((back[0]?.at ?? 0) - onsetAt).toFixed(0)
      } ms after the caller's onset; worker log: ${kinds.join(" ")}`,
    );
    // The brain is told it: nothing of the late unit was heard.
    const heard = await waitForLog(
      service,
      sessionId,
      (e) => e.source === "to_brain" && e.kind === "heard" && e.data.unit_id === "t1.2",
    );
    assertEquals([heard.data.text ?? "", heard.data.cut_off], ["", true]);
    await caller.hangUp();
    await service.record(sessionId, "ended");
  } finally {
    await load?.stop();
    await service.close();
  }
});
