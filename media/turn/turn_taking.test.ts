import { assertEquals } from "../../tests/helpers/assert.ts";
import { type TurnEvent, TurnTaking } from "./turn_taking.ts";

function run(events: TurnEvent[], machine = new TurnTaking()) {
  const actions = events.flatMap((e) => machine.next(e));
  return { machine, actions };
}

Deno.test("a caller turn goes listening → speaking → end of turn → brain → bot → listening", () => {
  const m = new TurnTaking();
  assertEquals(m.next({ type: "speech_started" }), [{ type: "start_recognition" }]);
  assertEquals(m.state, "caller_speaking");
  assertEquals(m.next({ type: "speech_stopped" }), [{ type: "finish_recognition" }]);
  assertEquals(m.state, "end_of_turn");
  assertEquals(m.next({ type: "final_text", text: " what time is it " }), [
    { type: "send_user_turn", turnId: "t1", text: "what time is it" },
  ]);
  assertEquals(m.state, "waiting_for_brain");
  m.next({ type: "playback_started", turnId: "t1" });
  assertEquals(m.state, "bot_speaking");
  m.next({ type: "reply_finished", turnId: "t1" });
  assertEquals(m.state, "listening");
});

Deno.test("an utterance with no words sends no turn and gives the floor back", () => {
  const { machine, actions } = run([
    { type: "speech_started" },
    { type: "speech_stopped" },
    { type: "final_text", text: "  " },
  ]);
  assertEquals(actions.map((a) => a.type), ["start_recognition", "finish_recognition"]);
  assertEquals(machine.state, "listening");
});

Deno.test("barge-in while the bot speaks interrupts that turn and drops its later units", () => {
  const { machine, actions } = run([
    { type: "speech_started" },
    { type: "speech_stopped" },
    { type: "final_text", text: "tell me a story" },
    { type: "playback_started", turnId: "t1" },
    { type: "speech_started" },
  ]);
  assertEquals(actions.slice(-2), [{ type: "interrupt", turnId: "t1" }, {
    type: "start_recognition",
  }]);
  assertEquals(machine.state, "caller_speaking");
  assertEquals(machine.wants("t1"), false);
  // The interrupted reply finishing later changes nothing.
  machine.next({ type: "reply_finished", turnId: "t1" });
  assertEquals(machine.state, "caller_speaking");
});

Deno.test("speech while waiting for the brain cancels the pending reply too", () => {
  const { machine, actions } = run([
    { type: "speech_started" },
    { type: "speech_stopped" },
    { type: "final_text", text: "hello" },
    { type: "speech_started" },
    { type: "speech_stopped" },
    { type: "final_text", text: "are you there" },
  ]);
  assertEquals(
    actions.filter((a) => a.type !== "start_recognition" && a.type !== "finish_recognition"),
    [
      { type: "send_user_turn", turnId: "t1", text: "hello" },
      { type: "interrupt", turnId: "t1" },
      { type: "send_user_turn", turnId: "t2", text: "are you there" },
    ],
  );
  assertEquals(machine.replyTurn, "t2");
  assertEquals(machine.wants("t2"), true);
});

Deno.test("a caller who resumes before the text is final makes one turn, not two", () => {
  const { actions } = run([
    { type: "speech_started" },
    { type: "speech_stopped" },
    { type: "speech_started" },
    { type: "final_text", text: "I would like" },
    { type: "speech_stopped" },
    { type: "final_text", text: "a coffee" },
  ]);
  assertEquals(actions.filter((a) => a.type === "send_user_turn"), [
    { type: "send_user_turn", turnId: "t1", text: "I would like a coffee" },
  ]);
});

Deno.test("the greeting holds the floor and can be interrupted like a reply", () => {
  const { machine, actions } = run([
    { type: "greeting_expected" },
    { type: "playback_started", turnId: "greeting" },
    { type: "speech_started" },
  ]);
  assertEquals(actions[0], { type: "interrupt", turnId: "greeting" });
  assertEquals(machine.state, "caller_speaking");
});

Deno.test("idle hands the brain the floor only while listening", () => {
  const m = new TurnTaking();
  m.next({ type: "speech_started" });
  assertEquals(m.next({ type: "idle_elapsed" }), []);
  m.next({ type: "speech_stopped" });
  m.next({ type: "final_text", text: "" });
  assertEquals(m.next({ type: "idle_elapsed" }), [{ type: "send_user_idle", turnId: "t1" }]);
  assertEquals(m.state, "waiting_for_brain");
  m.next({ type: "reply_finished", turnId: "t1" });
  assertEquals(m.state, "listening");
});

Deno.test("a Say takes a free floor as its own turn, and barge-in cuts it like a reply", () => {
  const m = new TurnTaking();
  assertEquals(m.next({ type: "say_requested", sayId: "s.1", text: "Your order shipped." }), [
    { type: "open_say", turnId: "t1", sayId: "s.1", text: "Your order shipped." },
  ]);
  assertEquals(m.accept("t1"), "accepted");
  m.next({ type: "playback_started", turnId: "t1" });
  assertEquals(m.state, "bot_speaking");
  assertEquals(m.next({ type: "speech_started" }), [
    { type: "interrupt", turnId: "t1" },
    { type: "start_recognition" },
  ]);
  assertEquals(m.accept("t1"), "cancelled");
});

Deno.test("a Say is refused while the caller or a reply holds the floor, and nothing changes", () => {
  const say = { type: "say_requested", sayId: "s.1", text: "hi" } as const;
  const m = new TurnTaking();
  m.next({ type: "speech_started" });
  assertEquals(m.next(say), [
    { type: "refuse_say", sayId: "s.1", detail: "the caller holds the floor" },
  ]);
  assertEquals(m.state, "caller_speaking");
  m.next({ type: "speech_stopped" });
  assertEquals(m.next(say)[0].type, "refuse_say"); // its words are being finalized
  m.next({ type: "final_text", text: "hello" });
  assertEquals(m.next(say), [
    { type: "refuse_say", sayId: "s.1", detail: "the bot holds the floor (turn t1)" },
  ]);
  assertEquals([m.state, m.replyTurn, m.latest], ["waiting_for_brain", "t1", "t1"]);
  m.next({ type: "playback_started", turnId: "t1" });
  assertEquals(m.next(say)[0].type, "refuse_say");
  m.next({ type: "reply_finished", turnId: "t1" });
  assertEquals(m.next(say), [{ type: "open_say", turnId: "t2", sayId: "s.1", text: "hi" }]);
});

Deno.test("a Say after a reply timed out supersedes that turn: it is cancelled", () => {
  const m = new TurnTaking();
  run([
    { type: "speech_started" },
    { type: "speech_stopped" },
    { type: "final_text", text: "hello" },
    { type: "reply_timeout", turnId: "t1" },
  ], m);
  assertEquals(m.next({ type: "say_requested", sayId: "", text: "One moment." }), [
    { type: "cancel", turnId: "t1" },
    { type: "open_say", turnId: "t2", sayId: "", text: "One moment." },
  ]);
  assertEquals(m.accept("t1"), "cancelled");
});
