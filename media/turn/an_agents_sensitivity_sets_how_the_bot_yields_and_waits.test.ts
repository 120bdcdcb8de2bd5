// The agent's levels (common/turn_sensitivity.ts) as the worker applies them: the turn machine
// built as caller_audio.ts builds it, fed scripted events.
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import {
  PATIENCE_SCALE,
  SENSITIVITY_LEVELS,
  type SensitivityLevel,
  turnSensitivityOf,
  YIELDING,
} from "../../common/turn_sensitivity.ts";
import { EndOfTurnPolicy } from "./end_of_turn.ts";
import { type TurnAction, TurnTaking } from "./turn_taking.ts";

function machine(yields: SensitivityLevel, patience: SensitivityLevel = "medium"): TurnTaking {
  const y = YIELDING[yields];
  return new TurnTaking({
    mode: "adaptive",
    language: "en",
    policy: new EndOfTurnPolicy("en", { scale: PATIENCE_SCALE[patience] }),
    overlapMaxMs: y.overlapMaxMs,
    ignoreBackchannels: y.ignoreBackchannels,
  });
}

/** The bot is speaking turn t1. */
function botSpeaking(m: TurnTaking): TurnTaking {
  m.next({ type: "speech_started", onsetMs: 0 });
  m.next({ type: "speech_stopped" });
  m.next({ type: "final_text", text: "hello" });
  m.next({ type: "playback_started", turnId: "t1" });
  assertEquals(m.state, "bot_speaking");
  return m;
}

const kinds = (out: TurnAction[]) => out.map((a) => a.type);

Deno.test("a backchannel over the bot lets it play on unless the agent yields at any word", () => {
  for (const level of SENSITIVITY_LEVELS) {
    const m = botSpeaking(machine(level));
    const out = [
      { type: "speech_started", onsetMs: 20_000 },
      { type: "speech_paused", silenceStartMs: 20_300, atMs: 20_460 },
      { type: "final_text", text: "yeah" },
    ].flatMap((e) => m.next(e as never));
    const expected = level === "high" ? "interrupt" : "resume_bot";
    assert(kinds(out).includes(expected), `${level}: ${kinds(out)}`);
  }
});

Deno.test("speech going on over the bot takes the floor sooner the more readily the agent yields", () => {
  const cutAfter = (level: SensitivityLevel) => {
    const m = botSpeaking(machine(level));
    m.next({ type: "speech_started", onsetMs: 10_000 });
    for (let t = 10_000; t <= 13_000; t += 32) {
      if (kinds(m.next({ type: "audio_time", atMs: t })).includes("interrupt")) return t - 10_000;
    }
    throw new Error(`${level}: never cut`);
  };
  const [low, medium, high] = SENSITIVITY_LEVELS.map(cutAfter);
  assert(high < medium && medium < low, `${high} < ${medium} < ${low}`);
  assert(
    YIELDING.low.bargeInMs > YIELDING.medium.bargeInMs,
    "low needs more speech to hold the bot",
  );
});

Deno.test("turn patience scales every end-of-turn window; the default is today's", () => {
  const text = "i would like to check my order";
  const windows = SENSITIVITY_LEVELS.map((l) => machine("medium", l).policy.windowMs(text));
  assert(windows[0] < windows[1] && windows[1] < windows[2], `${windows}`);
  assertEquals(windows[1], new EndOfTurnPolicy("en").windowMs(text));
  assertEquals(turnSensitivityOf({}), {
    interruption_sensitivity: "medium",
    turn_patience: "medium",
  });
  // A value the API would refuse never reaches the worker, but if it did: the default.
  assertEquals(turnSensitivityOf({ turn_patience: "forever" }).turn_patience, "medium");
});
