// Idle fires only when the session sets idle.timeout_ms; page messages (client-message, ui-event)
// reach the brain verbatim;
// the brain's actions reach the page as server-message; the brain's end request ends the call
// after its last words; the brain's Config switches the voice live.
import { assert, assertEquals } from "./helpers/assert.ts";
import { startCallService, waitForLog } from "./helpers/call_harness.ts";
import { createBrain, type Session } from "../sdk/brain/mod.ts";

function scriptedBrain(events: string[]) {
  return createBrain({
    onSessionStart: () => "Hi.",
    onTurn: () => "OK.",
    onUserIdle: (idle) => {
      events.push(`idle ${idle.idleMs}`);
      return "Still there?";
    },
    onRtvi: (message, session: Session) => {
      events.push(`rtvi ${JSON.stringify(message)}`);
      if (message.data?.t === "voice") session.configure({ tts: { voice: "VOICE_ARJUN" } });
      if (message.data?.t === "show") session.dispatch("card", { title: "Your order" });
      if (message.data?.t === "bye") session.end("page asked");
    },
  });
}

Deno.test("idle fires after the set timeout and never when it is not set", async (t) => {
  const events: string[] = [];
  const service = await startCallService(scriptedBrain(events));
  try {
    await t.step("idle.timeout_ms 1500: UserIdle after the greeting and silence", async () => {
      const { caller, sessionId } = await service.call({ config: { idle: { timeout_ms: 1500 } } });
      const idle = await waitForLog(
        service,
        sessionId,
        (e) => e.source === "to_brain" && e.kind === "user_idle",
      );
      assert(idle.data.idle_ms >= 1500, JSON.stringify(idle.data));
      await caller.waitForMessage(
        (m) => m.type === "bot-output" && (m.data as { text: string }).text === "Still there?",
      );
      await caller.hangUp();
    });
    await t.step("no idle config: the same silence gives no UserIdle", async () => {
      const { caller, sessionId } = await service.call();
      await caller.waitForMessage((m) => m.type === "bot-stopped-speaking", 15_000);
      await new Promise((r) => setTimeout(r, 3500));
      await caller.hangUp();
      const record = await service.record(sessionId, "ended");
      assertEquals(record.log.filter((e: { kind: string }) => e.kind === "user_idle").length, 0);
    });
  } finally {
    await service.close();
  }
});

Deno.test("page messages reach the brain verbatim; actions and end come back", async () => {
  const events: string[] = [];
  const service = await startCallService(scriptedBrain(events));
  try {
    const { caller, sessionId } = await service.call();
    await caller.waitForMessage((m) => m.type === "bot-stopped-speaking", 15_000);

    caller.sendRtvi("client-message", { t: "show", d: { sku: 42 } });
    const action = await caller.waitForMessage((m) => m.type === "server-message");
    assertEquals(action.data, { type: "card", data: { title: "Your order" } });
    const forwarded = events.find((e) => e.includes('"show"'))!;
    assertEquals(JSON.parse(forwarded.slice(5)).data, { t: "show", d: { sku: 42 } });

    caller.sendRtvi("ui-event", { event: "clicked", payload: { button: "buy" } });
    await waitForLog(
      service,
      sessionId,
      (e) =>
        e.source === "to_brain" && e.kind === "client_message" && e.data.json.includes("ui-event"),
    );
    const types = events.filter((e) => e.startsWith("rtvi")).map((e) =>
      JSON.parse(e.slice(5)).type
    );
    // send-text is a typed turn, not a page message (tests/call_typed_turn_*.test.ts).
    assertEquals(types, ["client-message", "ui-event"]);

    caller.sendRtvi("client-message", { t: "voice" });
    await waitForLog(service, sessionId, (e) => e.kind === "config_applied");

    caller.sendRtvi("client-message", { t: "bye" });
    const record = await service.record(sessionId, "ended");
    assertEquals(record.end_reason, "brain_ended");
    const kinds = record.log.filter((e: { source: string }) => e.source === "to_brain")
      .map((e: { kind: string }) => e.kind);
    assertEquals(kinds.slice(-2), ["finalize", "end"]);
  } finally {
    await service.close();
  }
});
