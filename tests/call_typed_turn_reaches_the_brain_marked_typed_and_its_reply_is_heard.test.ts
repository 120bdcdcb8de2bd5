// A typed turn through the whole service: the page's send-text (what client-js's sendText sends)
// reaches the brain as a UserTurn marked typed, is echoed to the page as its final
// user-transcription, and the brain's reply is synthesised and heard. Typed over a reply, it
// interrupts the bot as barge-in does: Cancel, a cut-off Heard, and the new turn's reply heard.
import { assert, assertEquals } from "./helpers/assert.ts";
import { botAudioAfter, startCallService, waitForLog } from "./helpers/call_harness.ts";
import { createExampleBrain } from "../sdk/brain/example/brain.ts";
import type { TestCaller } from "../caller/caller.ts";

const text = (m: { data?: unknown }) => String((m.data as { text?: unknown })?.text ?? "");
const status = (m: { data?: unknown }) => (m.data as { spoken_status?: string })?.spoken_status;

/** client-js 1.13.1's sendText(content) with no options: `{content, options: {}}`. */
function sendText(caller: TestCaller, content: string): number {
  caller.sendRtvi("send-text", { content, options: {} });
  return performance.now();
}

Deno.test("a typed turn reaches the brain marked typed, and its reply is spoken and heard", async () => {
  const service = await startCallService(createExampleBrain());
  try {
    const { caller, sessionId } = await service.call();
    await caller.waitForMessage((m) => m.type === "bot-stopped-speaking", 15_000);

    const sentAt = sendText(caller, "  my order number is 42 ");
    const turn = await waitForLog(
      service,
      sessionId,
      (e) => e.source === "to_brain" && e.kind === "user_turn",
    );
    assertEquals(turn.data.text, "my order number is 42");
    assertEquals(turn.data.typed, true);
    const echo = await caller.waitForMessage((m) => m.type === "user-transcription");
    assertEquals(echo.data, {
      ...(echo.data as object),
      text: "my order number is 42",
      final: true,
    });

    const reply = "You said: my order number is 42";
    await caller.waitForMessage((m) => m.type === "bot-output" && text(m) === reply, 15_000);
    const heard = await waitForLog(
      service,
      sessionId,
      (e) => e.source === "to_brain" && e.kind === "heard" && e.data.text === reply,
    );
    assertEquals(heard.data.cut_off, false);
    assert(botAudioAfter(caller, sentAt) !== undefined, "the caller never heard the reply");

    // Typed over a long reply: the bot is cut as by barge-in, and the typed turn answered.
    sendText(caller, "tell me a story");
    await caller.waitForMessage(
      (m) => m.type === "bot-output" && status(m) === "new" && text(m).startsWith("Once upon"),
      20_000,
    );
    await new Promise((r) => setTimeout(r, 1500));
    const loud = caller.heardFrames.slice(-25).filter((f) => f.rms > 300).length;
    assert(loud > 5, "the bot was not speaking 1.5 s into the story");
    const stopAt = sendText(caller, "okay"); // spoken, a backchannel; typed, a turn
    const cancel = await waitForLog(
      service,
      sessionId,
      (e) => e.source === "to_brain" && e.kind === "cancel",
    );
    const bargeIn = await waitForLog(service, sessionId, (e) => e.kind === "barge_in");
    assertEquals(bargeIn.data, { turn_id: cancel.data.turn_id, typed: true });
    const cut = await waitForLog(
      service,
      sessionId,
      (e) => e.source === "to_brain" && e.kind === "heard" && e.data.cut_off === true,
    );
    assert(cut.data.text.length > 0, "nothing of the story was heard before the cut");
    await caller.waitForMessage((m) => m.type === "bot-output" && text(m) === "You said: okay");
    await waitForLog(
      service,
      sessionId,
      (e) => e.source === "to_brain" && e.kind === "heard" && e.data.text === "You said: okay",
    );
    assert(botAudioAfter(caller, stopAt) !== undefined);

    await caller.hangUp();
    const record = await service.record(sessionId, "ended");
    const turns = record.timings.turns.map((
      t: { turn_id: string; trigger: string; user_text: string; interrupted: boolean },
    ) => [t.turn_id, t.trigger, t.user_text, t.interrupted]);
    assertEquals(turns, [
      ["greeting", "greeting", null, false],
      ["t1", "typed", "my order number is 42", false],
      ["t2", "typed", "tell me a story", true],
      ["t3", "typed", "okay", false],
    ]);
    const t1 = record.timings.turns[1];
    assert(t1.latency_ms.brain >= 0 && t1.latency_ms.synthesis >= 0, JSON.stringify(t1));
    assertEquals(t1.latency_ms.end_of_turn, undefined, "nobody spoke: no end of speech");
    const typedLog = record.log.filter((e: { kind: string }) => e.kind === "typed_text");
    assertEquals(typedLog.map((e: { data: { text: string } }) => e.data.text), [
      "my order number is 42",
      "tell me a story",
      "okay",
    ]);
  } finally {
    await service.close();
  }
});
