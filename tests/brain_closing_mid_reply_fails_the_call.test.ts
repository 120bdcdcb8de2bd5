// The brain goes away while its reply is being spoken — it closes the socket, or the connection
// is cut without a close frame: the call fails brain_disconnected at once, the page gets a fatal
// error, and the cut unit is recorded heard exactly as far as the caller heard it (the same text
// the page was last shown as heard), cut off.
import { assert, assertEquals } from "./helpers/assert.ts";
import { startInProcessCallService } from "./helpers/call_harness.ts";
import { endedAs, pageToldFatal } from "./helpers/fault_checks.ts";
import { rawBrain } from "./helpers/raw_brain.ts";
import { switchableProxy } from "./helpers/switchable_proxy.ts";
import type { TestCaller } from "../caller/caller.ts";

const STORY = "Once upon a time, a small robot lived in a lighthouse by the sea, and every night " +
  "it counted the ships that passed and wished that one of them would stop.";

/** What the page was last shown as heard of `text`. */
function lastShownHeard(caller: TestCaller, text: string): string {
  const outputs = caller.messages.filter((m) =>
    m.type === "bot-output" && (m.data as { text: string }).text === text
  );
  const last = outputs.at(-1)?.data as { spoken_progress: { accumulated_text: string } };
  return last?.spoken_progress.accumulated_text ?? "";
}

Deno.test("the brain going away mid-reply fails the call with what was heard", async (t) => {
  const brain = rawBrain(async (call) => {
    await call.next("session_start");
    call.send("greeting", { text: STORY });
  });
  const service = await startInProcessCallService(brain);
  try {
    for (
      const [name, how] of [
        ["the brain closes the socket", "close"],
        ["the connection is cut without a close frame", "cut"],
      ] as const
    ) {
      await t.step(`${name}: failed/brain_disconnected`, async () => {
        // The cut goes through a proxy that can drop the connection without a close frame.
        const proxy = how === "cut"
          ? switchableProxy(Number(new URL(service.brainUrl).port))
          : undefined;
        const { caller, sessionId } = proxy
          ? await service.callAs(await service.tenantFor(`ws://127.0.0.1:${proxy.port}/brain`))
          : await service.call();
        const brainCall = await brain.callOf(sessionId);
        await caller.waitForMessage((m) => m.type === "bot-started-speaking", 15_000);
        await new Promise((r) => setTimeout(r, 1500)); // well into the story
        const leftAt = performance.now();
        if (how === "close") brainCall.close(1000, "brain restarting");
        else proxy!.cut();
        const message = await pageToldFatal(caller);
        const failedMs = performance.now() - leftAt;
        assert(message.includes("closed the socket"), message);
        const record = await endedAs(service, sessionId, "failed", "brain_disconnected");
        const gone = record.log.find((e: { kind: string }) => e.kind === "brain_disconnected");
        assert(gone.data.detail.includes(how === "close" ? "(1000)" : "(1006)"), gone.data.detail);

        const greeting = record.timings.turns.find((x: { turn_id: string }) =>
          x.turn_id === "greeting"
        );
        const unit = greeting.units[0];
        assertEquals(unit.cut_off, true);
        assert(unit.heard.length > 0 && unit.heard.length < STORY.length, unit.heard);
        assert(STORY.startsWith(unit.heard), `"${unit.heard}" is not a prefix of the story`);
        assertEquals(unit.heard, lastShownHeard(caller, STORY), "the record and the page agree");
        console.log(
          `${how}: failed ${failedMs.toFixed(0)} ms after the brain left; heard "${unit.heard}"`,
        );
        assert(failedMs < 2000, `the call failed ${failedMs.toFixed(0)} ms after`);
        await caller.hangUp();
      });
    }

    await t.step("the worker then serves the next call", async () => {
      const { caller, sessionId } = await service.call();
      await caller.waitForMessage((m) => m.type === "bot-started-speaking", 15_000);
      await caller.hangUp();
      await endedAs(service, sessionId, "ended", "hangup");
    });
  } finally {
    await service.close();
  }
});
