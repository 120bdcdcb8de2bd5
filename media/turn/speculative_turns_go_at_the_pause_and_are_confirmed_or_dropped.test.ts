// Speculative turns (Config.turns.speculative) on the adaptive machine with scripted events: a
// pause's words go to the brain at once, its units are held, and the window closing confirms the
// turn; the caller going on cancels it and carries the words, as without speculation.
import { assertEquals } from "../../tests/helpers/assert.ts";
import { type TurnAction, type TurnEvent, TurnTaking } from "./turn_taking.ts";

const speculative = (on = true) =>
  new TurnTaking({ mode: "adaptive", language: "LANGUAGE_EN", speculative: on });
const run = (m: TurnTaking, events: TurnEvent[]): TurnAction[] => events.flatMap((e) => m.next(e));
const ticks = (from: number, to: number): TurnEvent[] => {
  const out: TurnEvent[] = [];
  for (let t = from; t <= to; t += 32) out.push({ type: "audio_time", atMs: t });
  return out;
};
const sends = (actions: TurnAction[]) =>
  actions.filter((a) => a.type === "send_user_turn" || a.type === "confirm_turn");

/** Speech from 0, a pause at 1000 ms reported 160 ms later, and its words. */
const paused = (text: string): TurnEvent[] => [
  { type: "speech_started", onsetMs: 0 },
  { type: "speech_paused", silenceStartMs: 1000, atMs: 1160 },
  { type: "final_text", text },
];

Deno.test("a pause's words go as a speculative turn at once and the window confirms it", () => {
  const m = speculative();
  run(m, paused("what time is it").slice(0, 2));
  // The words are in long before the window (250 ms for a complete question) closes.
  assertEquals(m.next({ type: "final_text", text: "what time is it" }), [
    { type: "send_user_turn", turnId: "t1", text: "what time is it", speculative: true },
  ]);
  assertEquals(m.state, "caller_paused");
  // Its units are synthesized but held, and a reply timeout means nothing while held.
  assertEquals(m.accept("t1"), "held");
  assertEquals(m.next({ type: "reply_timeout", turnId: "t1" }), []);
  assertEquals(m.accept("t1"), "held");
  // The window closes on the same words: confirmed, never sent a second time.
  const out = run(m, ticks(1192, 1400));
  assertEquals(out, [
    { type: "end_utterance", vadOpen: true, words: true, silenceMs: 256, windowMs: 250 },
    { type: "confirm_turn", turnId: "t1" },
  ]);
  assertEquals([m.state, m.replyTurn, m.accept("t1")], ["waiting_for_brain", "t1", "accepted"]);
  m.next({ type: "playback_started", turnId: "t1" });
  m.next({ type: "reply_finished", turnId: "t1" });
  assertEquals(m.state, "listening");
});

Deno.test("a caller who goes on cancels the speculative turn and its words lead the next one", () => {
  const m = speculative();
  // "could" hangs: its 2 s window holds the turn, and its words go at half of it.
  const first = run(m, [...paused("I was thinking we could"), ...ticks(1192, 2100)]);
  assertEquals(sends(first), [
    { type: "send_user_turn", turnId: "t1", text: "I was thinking we could", speculative: true },
  ]);
  // The caller resumes before the (long, unfinished) window closes.
  assertEquals(m.next({ type: "speech_resumed", pauseMs: 1100 }), [
    { type: "cancel", turnId: "t1", speculative: true },
    { type: "start_recognition" },
  ]);
  // The dropped turn's late units are cancelled, never held or played.
  assertEquals(m.accept("t1"), "cancelled");
  const rest = run(m, [
    { type: "speech_paused", silenceStartMs: 3000, atMs: 3160 },
    { type: "final_text", text: "meet on friday instead" },
    ...ticks(3192, 4200),
  ]);
  const whole = "I was thinking we could meet on friday instead";
  assertEquals(sends(rest), [
    { type: "send_user_turn", turnId: "t2", text: whole, speculative: true },
    { type: "confirm_turn", turnId: "t2" },
  ]);
  assertEquals(m.accept("t2"), "accepted");
});

Deno.test("words that change before the window closes cancel the speculative turn and go again", () => {
  const m = speculative();
  run(m, paused("book a table"));
  // Recognition finishes again in the same pause, with more words.
  assertEquals(m.next({ type: "final_text", text: "book a table for two" }), [
    { type: "cancel", turnId: "t1", speculative: true },
    { type: "send_user_turn", turnId: "t2", text: "book a table for two", speculative: true },
  ]);
  // The same words again change nothing.
  assertEquals(m.next({ type: "final_text", text: "book a table for two" }), []);
  assertEquals([m.accept("t1"), m.accept("t2")], ["cancelled", "held"]);
  assertEquals(sends(run(m, ticks(1192, 2600))), [{ type: "confirm_turn", turnId: "t2" }]);
});

Deno.test("the VAD's own end confirms a speculative turn whose words are in", () => {
  const m = speculative();
  run(m, [...paused("and then we um"), ...ticks(1192, 2100)]);
  assertEquals(sends(m.next({ type: "speech_stopped" })), [{ type: "confirm_turn", turnId: "t1" }]);
});

Deno.test("words the turn cannot end on go speculatively only halfway through their window", () => {
  for (const text of ["so I was thinking that maybe", "and um", "my number is nine eight four"]) {
    const m = speculative();
    // Their window is the 2 s hold: nothing goes at the pause, nor in its first second.
    assertEquals(run(m, [...paused(text), ...ticks(1192, 1992)]), [
      { type: "start_recognition" },
      { type: "finish_recognition" },
    ], text);
    // Most callers go on within it ("um …"): no turn was sent, so none is cancelled.
    const resumed = speculative();
    run(resumed, [...paused(text), ...ticks(1192, 1800)]);
    assertEquals(resumed.next({ type: "speech_resumed", pauseMs: 800 }), [
      { type: "start_recognition" },
    ], text);
    // A caller who did stop there: the words go at 1 s of silence, confirmed when it closes.
    assertEquals(sends(run(m, ticks(2024, 2100))), [
      { type: "send_user_turn", turnId: "t1", text, speculative: true },
    ], text);
    assertEquals(sends(run(m, ticks(2132, 3100))), [{ type: "confirm_turn", turnId: "t1" }], text);
  }
});

Deno.test("an empty pause or speech over the bot is never sent speculatively", () => {
  const m = speculative();
  assertEquals(run(m, paused("")), [{ type: "start_recognition" }, { type: "finish_recognition" }]);
  run(m, [{ type: "speech_resumed", pauseMs: 300 }]);
  // A reply playing, the caller says "yeah" over it: judged as a backchannel, no turn at all.
  const b = speculative();
  run(b, [...paused("what time is it"), ...ticks(1192, 1400)]);
  b.next({ type: "playback_started", turnId: "t1" });
  const over = run(b, [
    { type: "speech_started", onsetMs: 5000 },
    { type: "speech_paused", silenceStartMs: 5300, atMs: 5460 },
    { type: "final_text", text: "yeah" },
  ]);
  assertEquals(over.map((a) => a.type), [
    "pause_bot",
    "start_recognition",
    "finish_recognition",
    "end_utterance",
    "resume_bot",
  ]);
  assertEquals(b.state, "bot_speaking");
});

Deno.test("barge-in, a typed turn and Say work on a confirmed speculative reply", () => {
  const m = speculative();
  run(m, [...paused("tell me a story"), ...ticks(1192, 1400)]);
  m.next({ type: "playback_started", turnId: "t1" });
  // Typed text while the reply plays interrupts it and goes as its own turn.
  assertEquals(m.next({ type: "typed_text", text: "stop" }), [
    { type: "interrupt", turnId: "t1", typed: true },
    { type: "send_user_turn", turnId: "t2", text: "stop", typed: true },
  ]);
  // A Say is refused while the bot holds the floor, taken once it is free.
  assertEquals(m.next({ type: "say_requested", sayId: "s1", text: "hello" })[0].type, "refuse_say");
  m.next({ type: "playback_started", turnId: "t2" });
  // Speech over the reply that goes on past the backchannel limit takes the floor.
  const cut = run(m, [{ type: "speech_started", onsetMs: 9000 }, ...ticks(9032, 10_400)]);
  assertEquals(cut.filter((a) => a.type === "interrupt"), [{ type: "interrupt", turnId: "t2" }]);
});

Deno.test("a typed turn during a held pause waits and goes after the confirmation", () => {
  const m = speculative();
  run(m, paused("what time is it"));
  assertEquals(m.next({ type: "typed_text", text: "and the date" }), []);
  const out = run(m, ticks(1192, 1400));
  assertEquals(out.map((a) => a.type), [
    "end_utterance",
    "confirm_turn",
    "interrupt",
    "send_user_turn",
  ]);
  assertEquals(out[3], { type: "send_user_turn", turnId: "t2", text: "and the date", typed: true });
});

/** The reply in progress, whatever its id (speculation takes ids of its own). */
const reply = (type: "playback_started" | "reply_finished" | "reply_timeout") => (m: TurnTaking) =>
  ({ type, turnId: m.replyTurn ?? "none" }) as TurnEvent;

/** A call's worth of events: turns, a resumed pause, a backchannel, a typed turn, idle, a Say. */
const SCRIPT: (TurnEvent | ((m: TurnTaking) => TurnEvent))[] = [
  { type: "greeting_expected" },
  { type: "playback_started", turnId: "greeting" },
  { type: "reply_finished", turnId: "greeting" },
  ...paused("I would like"),
  ...ticks(1192, 1400),
  { type: "speech_resumed", pauseMs: 400 },
  { type: "speech_paused", silenceStartMs: 2000, atMs: 2160 },
  { type: "final_text", text: "a coffee please" },
  ...ticks(2192, 3000),
  reply("playback_started"),
  { type: "speech_started", onsetMs: 4000 },
  { type: "speech_paused", silenceStartMs: 4300, atMs: 4460 },
  { type: "final_text", text: "okay" },
  reply("reply_finished"),
  { type: "typed_text", text: "thanks" },
  reply("reply_timeout"),
  { type: "idle_elapsed" },
  { type: "say_requested", sayId: "s1", text: "still there?" },
];

Deno.test("with speculation off, or in fixed mode, the machine's actions are exactly as before", () => {
  const actions = (options: ConstructorParameters<typeof TurnTaking>[0]) => {
    const m = new TurnTaking(options);
    return SCRIPT.flatMap((e) => m.next(typeof e === "function" ? e(m) : e));
  };
  const today = actions({ mode: "adaptive", language: "LANGUAGE_EN" });
  assertEquals(actions({ mode: "adaptive", language: "LANGUAGE_EN", speculative: false }), today);
  assertEquals(today.some((a) => "speculative" in a || a.type === "confirm_turn"), false);
  const fixed = actions({ mode: "fixed", language: "LANGUAGE_EN" });
  assertEquals(actions({ mode: "fixed", language: "LANGUAGE_EN", speculative: true }), fixed);
  // On, speculation changes only how a turn goes (sent early, then confirmed), not which words.
  const on = actions({ mode: "adaptive", language: "LANGUAGE_EN", speculative: true });
  const sentText = (a: TurnAction[]) =>
    a.flatMap((x) => x.type === "send_user_turn" && !x.speculative ? [x.text] : []);
  const confirmedText = (a: TurnAction[]) => {
    const byId = new Map<string, string>();
    return a.flatMap((x) => {
      if (x.type === "send_user_turn") byId.set(x.turnId, x.text);
      if (x.type === "send_user_turn" && !x.speculative) return [x.text];
      return x.type === "confirm_turn" ? [byId.get(x.turnId)!] : [];
    });
  };
  assertEquals(confirmedText(on), sentText(today));
});
