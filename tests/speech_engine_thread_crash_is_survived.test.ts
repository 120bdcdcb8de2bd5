// A speech engine's thread crashing for real mid-call (an uncaught exception in the Worker thread,
// through the engines' test hooks): a crashed thread is replaced; synthesis retries a unit that
// had no audio yet on the new thread (engine_fallback espeak-ng → espeak-ng) and a unit cut by the
// crash is recorded heard as far as its audio went; recognition replays the utterance to a fresh
// stream (engine_fallback pocketsphinx → pocketsphinx). When even the fresh stream fails, the call
// ends failed/recognition_failed. The worker goes on serving calls.
import { assert, assertEquals } from "./helpers/assert.ts";
import { speech, startInProcessCallService } from "./helpers/call_harness.ts";
import { endedAs, pageToldFatal } from "./helpers/fault_checks.ts";
import { createBrain } from "../sdk/brain/mod.ts";
import type { EspeakEngine } from "../media/tts/espeak_engine.ts";
import type { PocketsphinxEngine } from "../media/stt/pocketsphinx.ts";
import type { TestCaller } from "../caller/caller.ts";

const LONG = "Once upon a time, a small robot lived in a lighthouse by the sea, and every night " +
  "it counted the ships that passed and wished that one of them would stop.";

function completed(caller: TestCaller, match: (text: string) => boolean, ms = 15_000) {
  return caller.waitForMessage(
    (m) =>
      m.type === "bot-output" &&
      (m.data as { spoken_status: string }).spoken_status === "completed" &&
      match((m.data as { text: string }).text),
    ms,
  );
}

Deno.test("a speech engine thread crashing mid-call is survived", async (t) => {
  let greeting = "Hello.";
  const service = await startInProcessCallService(createBrain({
    onSessionStart: () => greeting,
    onTurn: (turn) => `You said ${turn.text}.`,
  }));
  const espeak = service.engines.synthesis.engines.find((e) =>
    e.name === "espeak-ng"
  ) as EspeakEngine;
  const sphinx = service.engines.recognition.engines.find((e) =>
    e.name === "pocketsphinx"
  ) as PocketsphinxEngine;
  try {
    await t.step("synthesis crashes before the unit's audio: retried, heard whole", async () => {
      greeting = "Hello, and welcome.";
      espeak.crashThreadAtNextUnit(0);
      const { caller, sessionId } = await service.call();
      const done = await completed(caller, (text) => text === greeting);
      assertEquals(
        (done.data as { spoken_progress: { remaining_text: string } }).spoken_progress
          .remaining_text,
        "",
      );
      await caller.hangUp();
      const record = await endedAs(service, sessionId, "ended", "hangup");
      const fallback = record.log.find((e: { kind: string }) => e.kind === "engine_fallback");
      assertEquals(
        [fallback.data.leg, fallback.data.from, fallback.data.to],
        ["synthesis", "espeak-ng", "espeak-ng"],
      );
      assert(fallback.data.reason.includes("crashed"), fallback.data.reason);
      assertEquals(espeak.restarted, 1);
    });

    await t.step(
      "synthesis crashes mid-unit: the unit is cut where its audio stopped",
      async () => {
        greeting = LONG;
        espeak.crashThreadAtNextUnit(4);
        const { caller, sessionId } = await service.call();
        const cut = await completed(caller, (text) => text === LONG);
        const heardShown = (cut.data as { spoken_progress: { accumulated_text: string } })
          .spoken_progress.accumulated_text;
        await caller.hangUp();
        const record = await endedAs(service, sessionId, "ended", "hangup");
        assert(record.log.some((e: { kind: string }) => e.kind === "synthesis_error"));
        const unit = record.timings.turns[0].units[0];
        assertEquals(unit.cut_off, true);
        assert(LONG.startsWith(unit.heard) && unit.heard.length < LONG.length, unit.heard);
        assertEquals(unit.heard, heardShown, "the record and the page agree");
        assertEquals(espeak.restarted, 2);
      },
    );

    // (Its reply is spoken by espeak's second replacement thread.)
    await t.step(
      "recognition crashes at the utterance's end: replayed, the turn goes on",
      async () => {
        greeting = "Hi.";
        const { caller, sessionId } = await service.call();
        await completed(caller, (text) => text === "Hi.");
        sphinx.crashThreadAtNextFinish(1);
        await caller.say(await speech("what is the weather like today"));
        const reply = await completed(caller, (text) => text.startsWith("You said"), 20_000);
        const said = (reply.data as { text: string }).text;
        assert(/weather|today/.test(said), said);
        await caller.hangUp();
        const record = await endedAs(service, sessionId, "ended", "hangup");
        const fallback = record.log.find((e: { kind: string }) => e.kind === "engine_fallback");
        assertEquals(
          [fallback.data.leg, fallback.data.from, fallback.data.to],
          ["recognition", "pocketsphinx", "pocketsphinx"],
        );
        assert(fallback.data.reason.includes("crashed"), fallback.data.reason);
        assertEquals(sphinx.restarted, 1);
      },
    );

    await t.step(
      "recognition crashes again on the fresh stream: failed/recognition_failed",
      async () => {
        const { caller, sessionId } = await service.call();
        await completed(caller, (text) => text === "Hi.");
        sphinx.crashThreadAtNextFinish(2);
        await caller.say(await speech("what is the weather like today"));
        const message = await pageToldFatal(caller);
        assert(message.includes("crashed"), message);
        await endedAs(service, sessionId, "failed", "recognition_failed");
        await caller.hangUp();
        assertEquals(sphinx.restarted, 3);
      },
    );

    await t.step("the worker then serves a whole call: both engines on new threads", async () => {
      const stats = await sphinx.stats();
      assertEquals(stats.threads, 2);
      const { caller, sessionId } = await service.call();
      await completed(caller, (text) => text === "Hi.");
      await caller.say(await speech("what is the weather like today"));
      await completed(caller, (text) => text.startsWith("You said"), 20_000);
      await caller.hangUp();
      const record = await endedAs(service, sessionId, "ended", "hangup");
      assert(!record.log.some((e: { kind: string }) => e.kind === "engine_fallback"));
    });
  } finally {
    await service.close();
  }
});
