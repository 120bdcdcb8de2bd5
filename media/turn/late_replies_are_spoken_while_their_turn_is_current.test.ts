// A slow brain, as the turn-taking machine sees it: a reply that times out gives the caller the
// floor; its units are still spoken if they come while the turn is current (and take the floor
// again, so barge-in works on them), and dropped once the caller or idle superseded the turn.
import { assertEquals } from "../../tests/helpers/assert.ts";
import { type TurnEvent, TurnTaking } from "./turn_taking.ts";

function run(events: TurnEvent[], machine = new TurnTaking()) {
  const actions = events.flatMap((e) => machine.next(e));
  return { machine, actions };
}

const turn = (text: string): TurnEvent[] => [
  { type: "speech_started" },
  { type: "speech_stopped" },
  { type: "final_text", text },
];

Deno.test("a late greeting is spoken while nobody has spoken, and can be interrupted", () => {
  const { machine } = run([
    { type: "greeting_expected" },
    { type: "reply_timeout", turnId: "greeting" },
  ]);
  assertEquals(machine.state, "listening");
  assertEquals(machine.late, "greeting");
  assertEquals(machine.accept("greeting"), "accepted");
  assertEquals([machine.state, machine.replyTurn], ["waiting_for_brain", "greeting"]);
  machine.next({ type: "playback_started", turnId: "greeting" });
  assertEquals(machine.state, "bot_speaking");
  assertEquals(machine.next({ type: "speech_started" })[0], {
    type: "interrupt",
    turnId: "greeting",
  });
});

Deno.test("a timed-out turn is cancelled when the caller speaks; its units are dropped", () => {
  const { machine, actions } = run([
    ...turn("hello"),
    { type: "reply_timeout", turnId: "t1" },
    ...turn("are you there"),
  ]);
  assertEquals(actions.filter((a) => a.type === "cancel" || a.type === "send_user_turn"), [
    { type: "send_user_turn", turnId: "t1", text: "hello" },
    { type: "cancel", turnId: "t1" },
    { type: "send_user_turn", turnId: "t2", text: "are you there" },
  ]);
  assertEquals(machine.accept("t1"), "cancelled");
  assertEquals(machine.accept("t2"), "accepted");
});

Deno.test("idle supersedes a timed-out turn the same way", () => {
  const { machine, actions } = run([
    { type: "greeting_expected" },
    { type: "reply_timeout", turnId: "greeting" },
    { type: "idle_elapsed" },
  ]);
  assertEquals(actions, [
    { type: "cancel", turnId: "greeting" },
    { type: "send_user_idle", turnId: "t1" },
  ]);
  assertEquals(machine.accept("greeting"), "cancelled");
});

Deno.test("units of a turn older than the latest are superseded, even if it was never cut", () => {
  const { machine } = run([
    ...turn("first question"),
    { type: "playback_started", turnId: "t1" },
    { type: "reply_finished", turnId: "t1" },
    ...turn("second question"),
  ]);
  assertEquals(machine.accept("t1"), "superseded");
  assertEquals(machine.accept("t2"), "accepted");
});

Deno.test("a unit of the latest turn while the caller holds the floor is superseded", () => {
  const { machine } = run([
    ...turn("hello"),
    { type: "playback_started", turnId: "t1" },
    { type: "reply_finished", turnId: "t1" },
    { type: "speech_started" },
  ]);
  assertEquals(machine.accept("t1"), "superseded");
});

Deno.test("a reply timeout after the reply began, or for another turn, changes nothing", () => {
  const { machine } = run([
    ...turn("hello"),
    { type: "playback_started", turnId: "t1" },
    { type: "reply_timeout", turnId: "t1" },
    { type: "reply_timeout", turnId: "greeting" },
  ]);
  assertEquals([machine.state, machine.replyTurn, machine.late], ["bot_speaking", "t1", undefined]);
});
