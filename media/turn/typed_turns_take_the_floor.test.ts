// Typed turns (the page's RTVI send-text) in the turn machine, with scripted events: a typed
// turn is a turn at once, interrupts the bot (never a backchannel), and waits while the caller
// holds the floor.
import { assertEquals } from "../../tests/helpers/assert.ts";
import { type TurnAction, type TurnEvent, TurnTaking } from "./turn_taking.ts";

function run(m: TurnTaking, events: TurnEvent[]): TurnAction[] {
  return events.flatMap((e) => m.next(e));
}

/** What the call is asked to do, recognition steps left out. */
const calls = (out: TurnAction[]) =>
  out.filter((a) => a.type !== "start_recognition" && a.type !== "finish_recognition");

for (const mode of ["fixed", "adaptive"] as const) {
  Deno.test(`${mode}: a typed turn while listening goes to the brain marked typed and awaits its reply`, () => {
    const m = new TurnTaking({ mode });
    assertEquals(m.next({ type: "typed_text", text: "  my order is 42 " }), [
      { type: "send_user_turn", turnId: "t1", text: "my order is 42", typed: true },
    ]);
    assertEquals(m.state, "waiting_for_brain");
    assertEquals(m.accept("t1"), "accepted");
    m.next({ type: "playback_started", turnId: "t1" });
    assertEquals(m.state, "bot_speaking");
    m.next({ type: "reply_finished", turnId: "t1" });
    assertEquals(m.state, "listening");
  });

  Deno.test(`${mode}: a typed turn while the bot speaks interrupts it at once, backchannel words or not`, () => {
    const m = new TurnTaking({ mode });
    run(m, [{ type: "greeting_expected" }, { type: "playback_started", turnId: "greeting" }]);
    assertEquals(m.state, "bot_speaking");
    // "okay" spoken over the bot is a backchannel in adaptive mode; typed, the caller meant it.
    assertEquals(m.next({ type: "typed_text", text: "okay" }), [
      { type: "interrupt", turnId: "greeting", typed: true },
      { type: "send_user_turn", turnId: "t1", text: "okay", typed: true },
    ]);
    assertEquals(m.wants("greeting"), false);
    assertEquals(m.accept("greeting"), "cancelled");
    assertEquals(m.state, "waiting_for_brain");
    assertEquals(m.accept("t1"), "accepted");
  });

  Deno.test(`${mode}: a typed turn while a reply is awaited cancels that reply`, () => {
    const m = new TurnTaking({ mode });
    run(m, [{ type: "typed_text", text: "hello" }]);
    assertEquals(m.next({ type: "typed_text", text: "are you there" }), [
      { type: "interrupt", turnId: "t1", typed: true },
      { type: "send_user_turn", turnId: "t2", text: "are you there", typed: true },
    ]);
    assertEquals(m.accept("t1"), "cancelled");
    assertEquals(m.accept("t2"), "accepted");
  });

  Deno.test(`${mode}: a typed turn supersedes a turn whose reply timed out`, () => {
    const m = new TurnTaking({ mode });
    run(m, [{ type: "typed_text", text: "hello" }, { type: "reply_timeout", turnId: "t1" }]);
    assertEquals(m.state, "listening");
    assertEquals(m.next({ type: "typed_text", text: "hello?" }), [
      { type: "cancel", turnId: "t1" },
      { type: "send_user_turn", turnId: "t2", text: "hello?", typed: true },
    ]);
    assertEquals(m.accept("t1"), "cancelled");
  });

  Deno.test(`${mode}: an empty typed turn is no turn`, () => {
    const m = new TurnTaking({ mode });
    assertEquals(m.next({ type: "typed_text", text: " \n " }), []);
    assertEquals(m.state, "listening");
  });
}

Deno.test("fixed: a turn typed while the caller speaks waits for their words, then follows them", () => {
  const m = new TurnTaking({ mode: "fixed" });
  run(m, [{ type: "speech_started" }]);
  assertEquals(m.next({ type: "typed_text", text: "order 42" }), []);
  assertEquals(m.state, "caller_speaking");
  const out = run(m, [
    { type: "speech_stopped" },
    { type: "final_text", text: "my order number is" },
  ]);
  assertEquals(calls(out), [
    { type: "send_user_turn", turnId: "t1", text: "my order number is" },
    // The caller went on (by typing) before the reply began, as if they had spoken again.
    { type: "interrupt", turnId: "t1", typed: true },
    { type: "send_user_turn", turnId: "t2", text: "order 42", typed: true },
  ]);
  assertEquals(m.replyTurn, "t2");
});

Deno.test("fixed: a turn typed while the caller makes a noise goes once the noise is dropped", () => {
  const m = new TurnTaking({ mode: "fixed" });
  run(m, [{ type: "speech_started" }, { type: "typed_text", text: "hi" }, {
    type: "speech_stopped",
  }]);
  assertEquals(m.state, "end_of_turn");
  assertEquals(m.next({ type: "final_text", text: "" }), [
    { type: "send_user_turn", turnId: "t1", text: "hi", typed: true },
  ]);
});

Deno.test("adaptive: a turn typed while the caller speaks over the bot waits; after a backchannel it interrupts the bot", () => {
  const m = new TurnTaking({ mode: "adaptive", language: "LANGUAGE_EN" });
  run(m, [
    { type: "greeting_expected" },
    { type: "playback_started", turnId: "greeting" },
    { type: "speech_started", onsetMs: 1000 },
    { type: "typed_text", text: "what are your hours" },
  ]);
  assertEquals(m.state, "caller_speaking");
  const out = run(m, [
    { type: "speech_paused", silenceStartMs: 1300, atMs: 1460 },
    { type: "final_text", text: "yeah" },
  ]);
  assertEquals(calls(out), [
    { type: "end_utterance", vadOpen: true, words: false, silenceMs: 160, windowMs: 0 },
    { type: "resume_bot", turnId: "greeting", text: "yeah" },
    { type: "interrupt", turnId: "greeting", typed: true },
    { type: "send_user_turn", turnId: "t1", text: "what are your hours", typed: true },
  ]);
});

Deno.test("adaptive: a typed turn's words are not carried into the caller's next spoken turn", () => {
  const m = new TurnTaking({ mode: "adaptive", language: "LANGUAGE_EN" });
  run(m, [{ type: "typed_text", text: "order 42" }]);
  const out = run(m, [
    { type: "speech_started", onsetMs: 5000 },
    { type: "speech_paused", silenceStartMs: 6000, atMs: 6160 },
    { type: "final_text", text: "what time is it" },
    { type: "audio_time", atMs: 8000 },
  ]);
  const sent = out.filter((a) => a.type === "send_user_turn");
  assertEquals(sent, [{ type: "send_user_turn", turnId: "t2", text: "what time is it" }]);
  assertEquals(m.accept("t1"), "cancelled");
});
