// session.say and the opt-in caller events in the SDK, over a real WebSocket driven by the
// worker-side test client (sdk/brain/test_worker.ts).
import assert from "node:assert/strict";
import type { SayOutcome } from "./mod.ts";
import { deferred, withBrain } from "./test_worker.ts";

Deno.test("say sends a Say and resolves with what the caller heard of it, or why it was refused", async () => {
  const outcomes: Promise<SayOutcome>[] = [];
  await withBrain({
    onSessionStart: () => "Hi.",
    onTurn: () => {},
    onDtmf: (dtmf, session) => {
      outcomes.push(session.say(`You pressed ${dtmf.digit}.`));
    },
  }, async (worker) => {
    worker.start("ses_1");
    assert.equal((await worker.next()).frame, "greeting");
    worker.send("dtmf", { digit: "1", duration_ms: 120 });
    const first = await worker.next();
    assert.deepEqual(first.say, { say_id: "say.1", text: "You pressed 1." });
    worker.send("say_started", { say_id: "say.1", turn_id: "t3" });
    worker.send("heard", { unit_id: "say.1", turn_id: "t3", text: "You pressed", cut_off: true });
    assert.deepEqual(await outcomes[0], { turnId: "t3", heard: "You pressed", cutOff: true });

    worker.send("dtmf", { digit: "2", duration_ms: 120 });
    assert.deepEqual((await worker.next()).say, { say_id: "say.2", text: "You pressed 2." });
    worker.send("say_refused", { say_id: "say.2", detail: "the caller holds the floor" });
    assert.deepEqual(await outcomes[1], {
      turnId: "",
      heard: "",
      cutOff: false,
      refused: "the caller holds the floor",
    });

    // Started but not yet heard when the call ends: settled from Finalize's list.
    worker.send("dtmf", { digit: "3", duration_ms: 120 });
    assert.deepEqual((await worker.next()).say, { say_id: "say.3", text: "You pressed 3." });
    worker.send("say_started", { say_id: "say.3", turn_id: "t4" });
    worker.send("finalize", {
      heard: [{ unit_id: "say.3", turn_id: "t4", text: "You pressed 3.", cut_off: false }],
    });
    worker.send("end", { reason: "hangup" });
    assert.deepEqual(await outcomes[2], { turnId: "t4", heard: "You pressed 3.", cutOff: false });
  });
});

Deno.test("say refuses empty text before sending anything", async () => {
  const thrown = deferred<string>();
  await withBrain({
    onSessionStart: (session) => {
      try {
        session.say("  ");
      } catch (err) {
        thrown.resolve((err as Error).message);
      }
      return "Hi.";
    },
    onTurn: () => {},
  }, async (worker) => {
    worker.start("ses_1");
    assert.equal(await thrown.promise, "session.say: text must be a non-empty string");
    assert.equal((await worker.next()).frame, "greeting"); // no Say went before it
  });
});

Deno.test("caller events and turn metrics reach their handlers once asked for", async () => {
  const seen: unknown[] = [];
  const metrics = deferred<unknown>();
  await withBrain({
    onSessionStart: (session) => {
      session.configure({ events: { speech: true, interim_text: true, turn_metrics: true } });
      return "Hi.";
    },
    onTurn: () => {},
    onUserSpeech: (speech) => void seen.push(speech),
    onInterimText: (interim) => void seen.push(interim),
    onTurnMetrics: (m) => metrics.resolve(m),
  }, async (worker) => {
    worker.start("ses_1");
    const config = await worker.next();
    assert.deepEqual(config.config, {
      tts: null,
      stt: null,
      idle: null,
      outbound_greeting: null,
      keypad: null,
      turns: null,
      events: { speech: true, interim_text: true, turn_metrics: true },
    });
    worker.send("user_speech", { speaking: true, over_bot: true });
    worker.send("interim_text", { text: "what time" });
    worker.send("user_speech", { speaking: false });
    worker.send("turn_metrics", {
      turn_id: "t1",
      trigger: "speech",
      latency_ms: { end_of_turn: 310, brain: 120.5 },
      interrupted: false,
    });
    assert.deepEqual(await metrics.promise, {
      turnId: "t1",
      trigger: "speech",
      latencyMs: { end_of_turn: 310, brain: 120.5 },
      interrupted: false,
    });
    assert.deepEqual(seen, [
      { speaking: true, overBot: true },
      { text: "what time" },
      { speaking: false, overBot: false },
    ]);
  });
});
