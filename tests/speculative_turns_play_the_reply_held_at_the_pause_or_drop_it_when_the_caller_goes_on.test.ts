// Speculative turns (Config.turns.speculative, set at sessions.connect) on a whole call: a werift
// caller speaking festival audio, a real worker, the example brain. A plain turn goes to the brain
// at the caller's pause marked speculative, then TurnConfirmed, and its reply is heard. A turn
// with a 1.4 s pause after "maybe" in the middle goes speculatively during the pause (words that
// hang go at half their 2 s window), is cancelled when the caller goes on (its reply never
// heard), and its words lead the turn with the whole text, whose reply is the only one heard.
import { assert, assertEquals } from "./helpers/assert.ts";
import { type LogEntry, speech, startCallService, waitForLog } from "./helpers/call_harness.ts";
import { concat } from "./helpers/test_signals.ts";
import { createExampleBrain } from "../sdk/brain/example/brain.ts";

const toBrain = (kind: string) => (e: LogEntry) => e.source === "to_brain" && e.kind === kind;
const of = (turnId: string) => (e: LogEntry) => e.data.turn_id === turnId;

Deno.test("a speculative turn's held reply plays when the window closes and is dropped when the caller goes on", async () => {
  const service = await startCallService(createExampleBrain(), {
    workerEnv: { END_OF_TURN: "adaptive" },
  });
  try {
    const { caller, sessionId } = await service.call({ config: { turns: { speculative: true } } });
    await caller.waitForMessage((m) => m.type === "bot-stopped-speaking", 15_000);

    // A plain turn: sent at the pause, confirmed when the window closes, its reply heard. Its
    // window is short (a question, 250 ms): when its words come only after it closed (recognition
    // slower than that on a busy host, seen once in CI) it goes as a plain turn, as without
    // speculation. The paused turn below is always sent speculatively first.
    await caller.say(await speech("what time is it"));
    const plain = await waitForLog(service, sessionId, toBrain("user_turn"));
    const id = plain.data.turn_id;
    const firstConfirmed = plain.data.speculative === true;
    if (firstConfirmed) {
      await waitForLog(service, sessionId, (e) => toBrain("turn_confirmed")(e) && of(id)(e));
    } else assertEquals(plain.data.speculative, undefined, JSON.stringify(plain.data));
    const heard = await waitForLog(service, sessionId, (e) => toBrain("heard")(e) && of(id)(e));
    assertEquals(heard.data.cut_off, false);
    assertEquals(heard.data.text, `You said: ${plain.data.text}`);
    await caller.waitForMessage((m) => m.type === "bot-stopped-speaking", 15_000);

    // A pause in the middle: "maybe" hangs, its words go at 1 s, and the caller goes on first.
    const paused = concat(
      await speech("so I was thinking that maybe"),
      new Int16Array(1400 * 48), // 1.4 s at 48 kHz
      await speech("we could meet on friday instead"),
    );
    await caller.say(paused);
    const turns = () =>
      service.log(sessionId).then((log) =>
        log.filter((e) => toBrain("user_turn")(e) && e.data.turn_id !== id)
      );
    // The whole turn's reply is the first one heard after the plain turn's (a dropped turn's never
    // is). Its words went speculatively and were confirmed, or, when they came only after the
    // window had closed (recognition slower than the window on a busy host), as a plain turn.
    const last = await waitForLog(
      service,
      sessionId,
      (e) => toBrain("heard")(e) && e.data.turn_id !== id && e.data.turn_id !== "greeting",
      20_000,
    );
    const log = await service.log(sessionId);
    const story = log.filter((e) =>
      ["turn_speculative", "turn_confirmed", "speculation_dropped", "final_text"].includes(
        e.kind,
      ) ||
      toBrain("user_turn")(e) || toBrain("cancel")(e) || toBrain("heard")(e)
    ).map((e) => `${e.source}/${e.kind} ${JSON.stringify(e.data)}`).join("\n");
    // The first half went speculatively at the pause and was cancelled when the caller went on
    // (any further pause inside the second half does the same); the last turn has the whole text.
    const sent = await turns();
    const [first, whole] = [sent[0], sent[sent.length - 1]];
    const dropped = sent.slice(0, -1).map((e) => e.data.turn_id);
    assert(dropped.length >= 1, story);
    for (const e of sent.slice(0, -1)) assertEquals(e.data.speculative, true, story);
    assertEquals(whole.data.turn_id, last.data.turn_id, story);
    const confirmed = whole.data.speculative === true;
    assert(
      whole.data.text.startsWith(first.data.text) &&
        whole.data.text.length > first.data.text.length,
      `"${first.data.text}" does not lead "${whole.data.text}"`,
    );
    assertEquals(log.filter(toBrain("cancel")).map((e) => e.data.turn_id), dropped, story);
    assertEquals(log.filter((e) => e.kind === "speculation_dropped").length, dropped.length);
    assertEquals(
      log.filter((e) => e.kind === "turn_confirmed" && e.source === "worker").length,
      Number(firstConfirmed) + Number(confirmed),
      story,
    );
    // Only the final reply was heard: nothing of a dropped turn, not even a cut-off Heard.
    const heardTurns = log.filter(toBrain("heard")).map((e) => e.data.turn_id);
    assertEquals(heardTurns.filter((t) => dropped.includes(t)), [], story);
    assert(heardTurns.includes(whole.data.turn_id), story);
    assertEquals(log.filter((e) => e.kind === "barge_in").length, 0, story);

    await caller.hangUp();
    const record = await service.record(sessionId, "ended");
    const speechTurns = record.timings.turns.filter((t: { trigger: string }) =>
      t.trigger === "speech"
    );
    // The dropped turn is no turn of the call; the others, where speculative and confirmed, have
    // their wait measured from the caller's end of speech as any turn's.
    assertEquals(speechTurns.map((t: { turn_id: string }) => t.turn_id), [id, whole.data.turn_id]);
    const confirmedTurns = speechTurns.filter((_: unknown, i: number) =>
      i === 0 ? firstConfirmed : confirmed
    );
    for (const t of confirmedTurns) {
      assertEquals(t.speculative, true);
      const l = t.latency_ms;
      assert(
        Math.abs(l.end_of_turn + l.release - l.end_to_first_audio) <= 0.25,
        JSON.stringify(l),
      );
    }
  } finally {
    await service.close();
  }
});
