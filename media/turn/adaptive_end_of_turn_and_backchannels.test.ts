// The adaptive machine (END_OF_TURN=adaptive) with scripted events: the silence that ends a turn
// follows the words and the caller, and speech over the bot pauses it before anything is
// cancelled. The fixed machine's behaviour is pinned by turn_taking.test.ts.
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { type TurnAction, type TurnEvent, TurnTaking } from "./turn_taking.ts";

const adaptive = () => new TurnTaking({ mode: "adaptive", language: "LANGUAGE_EN" });
const kinds = (actions: TurnAction[]) => actions.map((a) => a.type);

/** Runs events, returns every action. */
function run(m: TurnTaking, events: TurnEvent[]): TurnAction[] {
  return events.flatMap((e) => m.next(e));
}

/**
 * The caller speaks from `atMs`, pauses at `pauseAt` (the VAD reports it 160 ms later), the
 * words come back, then silence ticks by 32 ms frames: the silence at which the turn was sent.
 */
function silenceUntilSent(m: TurnTaking, text: string, atMs = 0): number {
  run(m, [{ type: "speech_started", onsetMs: atMs }]);
  const pauseAt = atMs + 1000;
  run(m, [
    { type: "speech_paused", silenceStartMs: pauseAt, atMs: pauseAt + 160 },
    { type: "final_text", text },
  ]);
  for (let t = pauseAt + 192; t <= pauseAt + 3000; t += 32) {
    const out = m.next({ type: "audio_time", atMs: t });
    if (out.some((a) => a.type === "send_user_turn")) return t - pauseAt;
  }
  throw new Error("the turn never ended");
}

/** Plays a reply to the end so the caller has the floor again. */
function finishReply(m: TurnTaking): void {
  const turnId = m.replyTurn!;
  m.next({ type: "playback_started", turnId });
  m.next({ type: "reply_finished", turnId });
  assertEquals(m.state, "listening");
}

Deno.test("complete words end the turn after a shorter silence than hesitant ones", () => {
  const complete = silenceUntilSent(adaptive(), "what time is it");
  const neutral = silenceUntilSent(adaptive(), "I would like to check my order");
  const hesitant = silenceUntilSent(adaptive(), "I would like to check my order and um");
  assert(complete < neutral && neutral < hesitant, `${complete} < ${neutral} < ${hesitant}`);
  // Far below the fixed 600 ms for a complete question, above it after a hesitation.
  assert(complete <= 288 && hesitant > 600, `${complete} ${hesitant}`);
});

Deno.test("at a pause recognition is finished at once, and the turn is sent when the window closes", () => {
  const m = adaptive();
  assertEquals(kinds(m.next({ type: "speech_started", onsetMs: 0 })), ["start_recognition"]);
  assertEquals(m.next({ type: "speech_paused", silenceStartMs: 1000, atMs: 1160 }), [
    { type: "finish_recognition" },
  ]);
  assertEquals(m.state, "caller_paused");
  // The words are in before the window: nothing yet.
  assertEquals(m.next({ type: "final_text", text: "what time is it" }), []);
  assertEquals(m.next({ type: "audio_time", atMs: 1224 }), []);
  assertEquals(m.next({ type: "audio_time", atMs: 1256 }), [
    { type: "end_utterance", vadOpen: true, words: true, silenceMs: 256, windowMs: 250 },
    { type: "send_user_turn", turnId: "t1", text: "what time is it" },
  ]);
  assertEquals(m.state, "waiting_for_brain");
});

Deno.test("a caller who resumes after a pause makes one turn with all their words", () => {
  const m = adaptive();
  const out = run(m, [
    { type: "speech_started", onsetMs: 0 },
    { type: "speech_paused", silenceStartMs: 800, atMs: 960 },
    { type: "final_text", text: "I would like" },
    { type: "audio_time", atMs: 1100 },
    { type: "speech_resumed", pauseMs: 400 },
    { type: "speech_paused", silenceStartMs: 2000, atMs: 2160 },
    { type: "final_text", text: "a coffee please" },
    { type: "audio_time", atMs: 2800 },
  ]);
  assertEquals(out.filter((a) => a.type === "send_user_turn"), [
    { type: "send_user_turn", turnId: "t1", text: "I would like a coffee please" },
  ]);
  // Recognition restarted for the second part.
  assertEquals(kinds(out).filter((k) => k === "start_recognition").length, 2);
});

Deno.test("a caller with long pauses within turns gets a longer window than a quick one", () => {
  const quick = adaptive();
  const slow = adaptive();
  for (let i = 0; i < 3; i++) {
    const at = i * 10_000;
    run(slow, [
      { type: "speech_started", onsetMs: at },
      { type: "speech_paused", silenceStartMs: at + 500, atMs: at + 660 },
      { type: "final_text", text: "well I think" },
      { type: "speech_resumed", pauseMs: 900 },
      { type: "speech_paused", silenceStartMs: at + 3000, atMs: at + 3160 },
      { type: "final_text", text: "that is right" },
      { type: "audio_time", atMs: at + 6000 },
    ]);
    finishReply(slow);
  }
  const text = "I would like to check my order";
  const quickMs = silenceUntilSent(quick, text, 50_000);
  const slowMs = silenceUntilSent(slow, text, 50_000);
  assert(slowMs > quickMs + 300, `slow caller ${slowMs} ms, quick caller ${quickMs} ms`);
});

Deno.test("a turn sent too early is cancelled and its words lead the next one", () => {
  const m = adaptive();
  silenceUntilSent(m, "what time is it");
  const out = run(m, [
    { type: "speech_started", onsetMs: 5000 },
    { type: "speech_paused", silenceStartMs: 6000, atMs: 6160 },
    { type: "final_text", text: "in London" },
    { type: "audio_time", atMs: 7000 },
  ]);
  assertEquals(
    out.filter((a) => a.type !== "start_recognition" && a.type !== "finish_recognition"),
    [
      { type: "interrupt", turnId: "t1" },
      { type: "end_utterance", vadOpen: true, words: true, silenceMs: 1000, windowMs: 250 },
      { type: "send_user_turn", turnId: "t2", text: "what time is it in London" },
    ],
  );
});

/** An adaptive machine whose bot is speaking the reply to t1. */
function botSpeaking(): TurnTaking {
  const m = adaptive();
  silenceUntilSent(m, "tell me a long story");
  m.next({ type: "playback_started", turnId: "t1" });
  assertEquals(m.state, "bot_speaking");
  return m;
}

Deno.test("a backchannel over the bot pauses it and resumes it: no cancel, no interrupt, no turn", () => {
  const m = botSpeaking();
  assertEquals(m.next({ type: "speech_started", onsetMs: 20_000 }), [
    { type: "pause_bot", turnId: "t1" },
    { type: "start_recognition" },
  ]);
  const out = run(m, [
    { type: "audio_time", atMs: 20_300 },
    { type: "speech_paused", silenceStartMs: 20_300, atMs: 20_460 },
    { type: "final_text", text: "yeah" },
  ]);
  assertEquals(out, [
    { type: "finish_recognition" },
    { type: "end_utterance", vadOpen: true, words: false, silenceMs: 160, windowMs: 0 },
    { type: "resume_bot", turnId: "t1", text: "yeah" },
  ]);
  assertEquals(m.state, "bot_speaking");
  assertEquals(m.wants("t1"), true);
  assertEquals(m.accept("t1"), "accepted");
  // Again with "okay", then the reply plays out as usual.
  const again = run(m, [
    { type: "speech_started", onsetMs: 25_000 },
    { type: "speech_paused", silenceStartMs: 25_250, atMs: 25_410 },
    { type: "final_text", text: "Okay." },
    { type: "reply_finished", turnId: "t1" },
  ]);
  assert(!kinds(again).some((k) => k === "cancel" || k === "interrupt" || k === "send_user_turn"));
  assertEquals(m.state, "listening");
});

Deno.test("a cough (no words) over the bot resumes it once the silence shows the caller is done", () => {
  const m = botSpeaking();
  const out = run(m, [
    { type: "speech_started", onsetMs: 20_000 },
    { type: "speech_paused", silenceStartMs: 20_100, atMs: 20_260 },
    { type: "final_text", text: "" },
  ]);
  // No words is not a backchannel: the bot stays held while the caller may go on.
  assertEquals(kinds(out), ["pause_bot", "start_recognition", "finish_recognition"]);
  const windowMs = m.policy.windowMs("");
  assertEquals(m.next({ type: "audio_time", atMs: 20_100 + windowMs - 20 }), []);
  assertEquals(kinds(m.next({ type: "audio_time", atMs: 20_100 + windowMs })), [
    "end_utterance",
    "resume_bot",
  ]);
  assertEquals(m.state, "bot_speaking");
});

Deno.test("a noise then words over the bot: the bot stays held between them and is cut", () => {
  const m = botSpeaking();
  const out = run(m, [
    { type: "speech_started", onsetMs: 20_000 },
    { type: "speech_paused", silenceStartMs: 20_200, atMs: 20_360 },
    { type: "final_text", text: "" },
    { type: "audio_time", atMs: 20_450 },
    { type: "speech_resumed", pauseMs: 250 },
    { type: "audio_time", atMs: 20_900 },
    { type: "speech_paused", silenceStartMs: 21_000, atMs: 21_160 },
    { type: "final_text", text: "stop please thank you" },
  ]);
  assert(!kinds(out).includes("resume_bot"), `actions: ${kinds(out).join(" ")}`);
  assertEquals(out.find((a) => a.type === "interrupt"), { type: "interrupt", turnId: "t1" });
  assertEquals(m.wants("t1"), false);
});

Deno.test("a noise over the bot that the VAD itself ends resumes it at once", () => {
  const m = botSpeaking();
  run(m, [
    { type: "speech_started", onsetMs: 20_000 },
    { type: "speech_paused", silenceStartMs: 20_100, atMs: 20_260 },
    { type: "final_text", text: "" },
  ]);
  assertEquals(kinds(m.next({ type: "speech_stopped" })), ["end_utterance", "resume_bot"]);
  assertEquals(m.state, "bot_speaking");
});

Deno.test("real words over the bot interrupt it as before and become the next turn", () => {
  const m = botSpeaking();
  const out = run(m, [
    { type: "speech_started", onsetMs: 20_000 },
    { type: "speech_paused", silenceStartMs: 20_900, atMs: 21_060 },
    { type: "final_text", text: "wait stop I have a question" },
    { type: "audio_time", atMs: 21_400 },
  ]);
  assertEquals(
    out.filter((a) => a.type !== "start_recognition" && a.type !== "finish_recognition"),
    [
      { type: "pause_bot", turnId: "t1" },
      { type: "interrupt", turnId: "t1" },
      { type: "end_utterance", vadOpen: true, words: true, silenceMs: 500, windowMs: 450 },
      { type: "send_user_turn", turnId: "t2", text: "wait stop I have a question" },
    ],
  );
  assertEquals(m.wants("t1"), false);
  assertEquals(m.accept("t1"), "cancelled");
});

Deno.test("speech over the bot that goes on past the bound interrupts before any pause", () => {
  const m = botSpeaking();
  run(m, [{ type: "speech_started", onsetMs: 20_000 }]);
  assertEquals(m.next({ type: "audio_time", atMs: 21_000 }), []);
  assertEquals(m.next({ type: "audio_time", atMs: 21_200 }), [{ type: "interrupt", turnId: "t1" }]);
  assertEquals(m.state, "caller_speaking");
  // A backchannel-looking end does not bring the cancelled reply back.
  const out = run(m, [
    { type: "speech_paused", silenceStartMs: 22_000, atMs: 22_160 },
    { type: "final_text", text: "yeah" },
    { type: "audio_time", atMs: 22_500 },
  ]);
  assert(!kinds(out).includes("resume_bot"));
  assertEquals(out.find((a) => a.type === "send_user_turn"), {
    type: "send_user_turn",
    turnId: "t2",
    text: "yeah",
  });
});

Deno.test("backchannels are judged in the caller's language (Hindi, Tamil)", () => {
  for (
    const [language, text] of [["LANGUAGE_HI", "हाँ जी"], ["LANGUAGE_HI", "achha"], [
      "LANGUAGE_TA",
      "ஆமா",
    ]]
  ) {
    const m = new TurnTaking({ mode: "adaptive", language });
    silenceUntilSent(m, "कहानी सुनाओ");
    m.next({ type: "playback_started", turnId: "t1" });
    const out = run(m, [
      { type: "speech_started", onsetMs: 20_000 },
      { type: "speech_paused", silenceStartMs: 20_200, atMs: 20_360 },
      { type: "final_text", text },
    ]);
    assertEquals(out.at(-1), { type: "resume_bot", turnId: "t1", text }, `${language} "${text}"`);
  }
});

Deno.test("the fixed machine ignores pauses and cuts the bot at once", () => {
  const m = new TurnTaking({ mode: "fixed" });
  const out = run(m, [
    { type: "speech_started", onsetMs: 0 },
    { type: "speech_paused", silenceStartMs: 500, atMs: 660 },
    { type: "final_text", text: "tell me a story" },
    { type: "audio_time", atMs: 2000 },
  ]);
  assertEquals(kinds(out), ["start_recognition"]);
  assertEquals(m.state, "caller_speaking");
  run(m, [{ type: "speech_stopped" }, { type: "final_text", text: "tell me a story" }]);
  m.next({ type: "playback_started", turnId: "t1" });
  assertEquals(m.next({ type: "speech_started", onsetMs: 9000 }), [
    { type: "interrupt", turnId: "t1" },
    { type: "start_recognition" },
  ]);
});

Deno.test("the VAD's own end of speech is the upper bound: the turn ends once the words are in", () => {
  const m = adaptive();
  const out = run(m, [
    { type: "speech_started", onsetMs: 0 },
    { type: "speech_paused", silenceStartMs: 1000, atMs: 1160 },
    { type: "audio_time", atMs: 3000 },
    { type: "speech_stopped" },
    { type: "final_text", text: "I would like to um" },
  ]);
  assertEquals(out.slice(-2), [
    { type: "end_utterance", vadOpen: false, words: true, silenceMs: 2000, windowMs: 2000 },
    { type: "send_user_turn", turnId: "t1", text: "I would like to um" },
  ]);
});
