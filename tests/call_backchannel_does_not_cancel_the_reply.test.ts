// Backchannels over a long reply (END_OF_TURN=adaptive, the default): the caller says "yeah" and
// "okay" while the bot tells its story. Each pauses the bot's audio at the frame; the words are a
// backchannel, so the bot goes on from where it stopped, the brain gets no Cancel and the units
// playing are heard whole. Then a real interruption cancels the reply as barge-in always did.
import { assert, assertEquals } from "./helpers/assert.ts";
import {
  askForTheStory,
  botAudioAfter,
  botSilentAt,
  type CallService,
  type LogEntry,
  speech,
  speechOnsetMs,
  startCallService,
  waitForLog,
} from "./helpers/call_harness.ts";
import type { TestCaller } from "../caller/caller.ts";
import { createExampleBrain } from "../sdk/brain/example/brain.ts";

/** Says `words` over the bot; returns when the caller's speech began (its true onset). */
async function sayOver(caller: TestCaller, words: Int16Array): Promise<number> {
  const loud = caller.heardFrames.slice(-25).filter((f) => f.rms > 300).length;
  assert(loud > 5, "the bot was not speaking when the caller spoke");
  const { startedAt } = await caller.say(words);
  return startedAt + speechOnsetMs(words);
}

/** Polls the session log until `n` entries match; returns the n-th. */
async function nthLog(
  service: CallService,
  sessionId: string,
  match: (e: LogEntry) => boolean,
  n: number,
  ms = 15_000,
): Promise<LogEntry> {
  const until = Date.now() + ms;
  for (;;) {
    const hits = (await service.log(sessionId)).filter(match);
    if (hits.length >= n) return hits[n - 1];
    if (Date.now() > until) {
      const kinds = (await service.log(sessionId)).map((e) =>
        `${e.kind}:${JSON.stringify(e.data)}`
      );
      throw new Error(`fewer than ${n} matching entries after ${ms} ms; log:\n${kinds.join("\n")}`);
    }
    await new Promise((r) => setTimeout(r, 150));
  }
}

const count = (log: LogEntry[], match: (e: LogEntry) => boolean) => log.filter(match).length;
const toBrain = (kind: string) => (e: LogEntry) => e.source === "to_brain" && e.kind === kind;

Deno.test("yeah and okay over a long reply pause and resume it; a real interruption cancels it", async () => {
  const service: CallService = await startCallService(createExampleBrain(), {
    workerEnv: { END_OF_TURN: "adaptive" },
  });
  try {
    const { caller, sessionId } = await service.call();
    await caller.waitForMessage((m) => m.type === "bot-stopped-speaking", 15_000);
    await askForTheStory(caller);
    await new Promise((r) => setTimeout(r, 1000));

    for (const [i, word] of ["yeah", "okay"].entries()) {
      const onset = await sayOver(caller, await speech(word));
      const resumed = await nthLog(service, sessionId, (e) => e.kind === "bot_resumed", i + 1);
      // The bot went quiet under the caller (paused at the frame) and spoke again after.
      const quietAt = botSilentAt(caller, onset);
      assert(quietAt !== undefined, `the bot did not pause for "${word}"`);
      await new Promise((r) => setTimeout(r, 800));
      assert(
        botAudioAfter(caller, quietAt + 200) !== undefined,
        `the bot did not resume after "${word}"`,
      );
      // What the recogniser made of the word, for the record of this test's honesty.
      console.log(`"${word}" was heard as "${resumed.data.text}"`);
      const log = await service.log(sessionId);
      assertEquals(count(log, (e) => e.kind === "bot_paused"), i + 1);
      assertEquals(count(log, toBrain("cancel")), 0, `Cancel after "${word}"`);
      assertEquals(count(log, (e) => e.kind === "barge_in"), 0, `barge-in after "${word}"`);
      await new Promise((r) => setTimeout(r, 700));
    }

    // The unit playing under "yeah" (the story's first) was heard whole, pause and all.
    const first = await nthLog(
      service,
      sessionId,
      (e) => toBrain("heard")(e) && String(e.data.text).startsWith("Once upon"),
      1,
    );
    assertEquals(first.data.cut_off, false);
    const firstUnit = (await service.log(sessionId)).find((e) =>
      e.source === "from_brain" && e.kind === "speech_unit" && e.data.unit_id === first.data.unit_id
    );
    assertEquals(first.data.text, firstUnit?.data.text);
    // Every unit that finished so far was heard whole, paused or not.
    const before = await service.log(sessionId);
    const heardSoFar = before.filter(toBrain("heard"));
    assert(heardSoFar.length >= 2, "no story unit finished during the backchannels");
    for (const h of heardSoFar) assertEquals(h.data.cut_off, false, JSON.stringify(h.data));
    // The brain was sent no turn for the backchannels: only the story request.
    const turnsSent = before.filter(toBrain("user_turn")).map((e) => e.data.text);
    assertEquals(turnsSent.length, 1, `turns sent: ${JSON.stringify(turnsSent)}`);

    // A real interruption: paused at once, then cancelled once the words are in.
    const onset = await sayOver(caller, await speech("wait, stop, I have a question"));
    const cancel = await waitForLog(service, sessionId, toBrain("cancel"));
    const bargeIn = await waitForLog(service, sessionId, (e) => e.kind === "barge_in");
    assertEquals(cancel.data.turn_id, bargeIn.data.turn_id);
    const stoppedAt = botSilentAt(caller, onset);
    assert(stoppedAt !== undefined, "the bot's audio never stopped");
    const cut = await waitForLog(
      service,
      sessionId,
      (e) => e.source === "to_brain" && e.kind === "heard" && e.data.cut_off === true,
    );
    const unit = (await service.log(sessionId)).find((e) =>
      e.source === "from_brain" && e.kind === "speech_unit" && e.data.unit_id === cut.data.unit_id
    );
    assert(
      unit && unit.data.text.startsWith(cut.data.text) &&
        cut.data.text.length < unit.data.text.length,
      `heard "${cut.data.text}" is not a strict prefix of "${unit?.data.text}"`,
    );
    // The caller's words became the next turn.
    const next = await waitForLog(
      service,
      sessionId,
      (e) => toBrain("user_turn")(e) && e.data.turn_id !== cancel.data.turn_id,
    );
    assert(/stop|wait|question/.test(next.data.text), `next turn: "${next.data.text}"`);
    await caller.hangUp();
    const record = await service.record(sessionId, "ended");
    const story = record.timings.turns.find((t: { interrupted: boolean }) => t.interrupted);
    assert(story, "no turn marked interrupted");
  } finally {
    await service.close();
  }
});
