// A whole call (the API, a real worker process, a brain on the SDK, a WebRTC test caller) with a
// webhook endpoint on the agent: the customer's receiver, verifying with npm:standardwebhooks,
// gets session.started and then session.ended, whose transcript says what the caller heard of the
// greeting, with the brain's end reason and the call's usage, both sent by the API's own
// dispatcher from the outbox rows the worker's writes queued.
import { assert, assertEquals } from "./helpers/assert.ts";
import { startCallService } from "./helpers/call_harness.ts";
import { WebhookReceiver } from "./helpers/webhook_receiver.ts";
import { createBrain } from "../sdk/brain/mod.ts";
import { newSealingKeyText } from "../common/sealed.ts";

Deno.test("a whole call's start and end reach the customer's receiver signed and verifiable", async () => {
  const brain = createBrain({
    onSessionStart: (session) => {
      setTimeout(() => session.end("greeted the caller"), 300);
      return "Hello, this is a short call.";
    },
    onTurn: () => "",
  });
  const service = await startCallService(brain, {
    apiEnv: { TRUNK_CREDENTIALS_KEY: newSealingKeyText() },
  });
  const receiver = new WebhookReceiver();
  receiver.up();
  try {
    const made = await service.api.admin("/api/v1/webhooks.create", {
      tenant: "acme",
      url: receiver.url,
      event_types: ["session.started", "session.ended"],
    });
    assertEquals(made.status, 200, JSON.stringify(made.body));
    receiver.setSecret(made.body.secret);
    const { sessionId } = await service.call();
    await service.record(sessionId, "ended", 20_000);
    const [started, ended] = await receiver.waitFor(2, 15_000);
    assertEquals(receiver.refused, []);
    assertEquals([started.type, ended.type], ["session.started", "session.ended"]);
    assertEquals(started.data.session_id, sessionId);
    assertEquals(ended.data.session_id, sessionId);
    assertEquals(ended.data.end_reason, "brain_ended");
    assertEquals(ended.data.brain_end_reason, "greeted the caller");
    const greeting = ended.data.transcript.find((t: { turn_id: string }) =>
      t.turn_id === "greeting"
    );
    assert(greeting, JSON.stringify(ended.data.transcript));
    assertEquals(greeting.bot[0].text, "Hello, this is a short call.");
    assert(typeof greeting.bot[0].heard === "string");
    assert(ended.data.usage.synthesized_characters > 0, JSON.stringify(ended.data.usage));
    assert(ended.data.call_seconds > 0);
  } finally {
    await receiver.down();
    await service.close();
  }
});
