// session.say, keypad collection, the opt-in caller events and machine detection are one protocol in both SDKs: a Python brain (its own
// process, sdk/python/tests/brains/say_and_events_brain.py) and the same brain in TypeScript get
// the same ServiceFrames from the same fake worker and send the same BrainFrames back.
import { assertEquals } from "../../tests/helpers/assert.ts";
import { startPythonBrain } from "../../tests/helpers/python_brain.ts";
import { type BrainFrame, TestWorker } from "../brain/test_worker.ts";
import { createBrain } from "../brain/mod.ts";

const NO_CONFIG = {
  tts: null,
  stt: null,
  idle: null,
  events: null,
  outbound_greeting: null,
  keypad: null,
  turns: null,
};
const PYTHON_BRAIN = new URL("./tests/brains/say_and_events_brain.py", import.meta.url).pathname;

function typescriptBrain() {
  return createBrain({
    onSessionStart: (session) => {
      session.configure({ events: { speech: true, interim_text: true, turn_metrics: true } });
      return "Hi.";
    },
    onTurn: () => {},
    onDtmf: async (dtmf, session) => {
      const outcome = await session.say(`You pressed ${dtmf.digit}.`);
      session.dispatch("said", {
        turn_id: outcome.turnId,
        heard: outcome.heard,
        cut_off: outcome.cutOff,
        refused: outcome.refused ?? "",
      });
    },
    onRtvi: async (message, session) => {
      if (message.data?.t !== "collect") return;
      const pin = await session.collectDigits({
        prompt: "Your PIN, then hash.",
        maxDigits: 6,
        terminator: "#",
        sensitive: true,
      });
      // A sensitive collection's digits never leave the brain: only their masked form.
      session.dispatch("collected", {
        digits: pin.shown,
        reason: pin.reason,
        prompt_refused: pin.promptRefused ?? "",
      });
      const menu = await session.collectDigits({ maxDigits: 1 });
      session.dispatch("menu", { digits: menu.digits, reason: menu.reason });
    },
    onUserSpeech: (e, session) =>
      session.dispatch("speech", { speaking: e.speaking, over_bot: e.overBot }),
    onInterimText: (e, session) => session.dispatch("interim", { text: e.text }),
    onTurnMetrics: (m, session) =>
      session.dispatch("metrics", {
        turn_id: m.turnId,
        trigger: m.trigger,
        latency_ms: m.latencyMs,
        interrupted: m.interrupted,
      }),
    onMachineDetected: (d, session) =>
      session.dispatch("machine", { outcome: d.outcome, at_ms: d.atMs, why: d.why }),
    onBeep: (b, session) =>
      session.dispatch("beep", { at_ms: b.atMs, heard: b.heard, hz: b.hz, why: b.why }),
  });
}

/** One scripted call; the frames the brain sent, actions' JSON parsed (Python writes 310.0). */
async function script(url: string): Promise<unknown[]> {
  const worker = await TestWorker.dial(url, "ses_same");
  const frames: BrainFrame[] = [];
  worker.start("ses_same");
  frames.push(...await worker.take(2)); // config, greeting
  worker.send("dtmf", { digit: "1", duration_ms: 100 });
  frames.push(await worker.next()); // say
  worker.send("say_started", { say_id: "say.1", turn_id: "t1" });
  worker.send("heard", { unit_id: "say.1", turn_id: "t1", text: "You pressed", cut_off: true });
  frames.push(await worker.next()); // said
  worker.send("dtmf", { digit: "2", duration_ms: 100 });
  frames.push(await worker.next()); // say
  worker.send("say_refused", { say_id: "say.2", detail: "the caller holds the floor" });
  frames.push(await worker.next()); // said (refused)
  worker.send("user_speech", { speaking: true, over_bot: true });
  frames.push(await worker.next());
  worker.send("interim_text", { text: "what ti" });
  frames.push(await worker.next());
  worker.send("user_speech", { speaking: false });
  frames.push(await worker.next());
  worker.send("turn_metrics", {
    turn_id: "t2",
    trigger: "speech",
    latency_ms: { end_of_turn: 310, to_brain: 0.4, brain: 120.5 },
    interrupted: true,
  });
  frames.push(await worker.next());
  worker.send("machine_detected", { outcome: "machine", at_ms: 3300, why: "long_greeting" });
  frames.push(await worker.next());
  worker.send("beep", { at_ms: 10900, heard: true, hz: 1000 });
  frames.push(await worker.next());
  // A sensitive collection with type-ahead over its prompt, then a menu choice.
  worker.send("client_message", { json: JSON.stringify({ data: { t: "collect" } }) });
  frames.push(...await worker.take(2)); // config (sensitive), say (the prompt)
  worker.send("say_started", { say_id: "say.3", turn_id: "t9" });
  for (const digit of ["1", "2", "3"]) worker.send("dtmf", { digit, duration_ms: 100 });
  worker.send("heard", { unit_id: "say.3", turn_id: "t9", text: "Your PIN, then hash." });
  worker.send("dtmf", { digit: "#", duration_ms: 100 });
  frames.push(...await worker.take(2)); // config (cleared), collected
  worker.send("dtmf", { digit: "4", duration_ms: 100 });
  frames.push(await worker.next()); // menu
  worker.send("end", { reason: "hangup" });
  await worker.closed;
  return frames.map(({ timestamp_ms: _, ...f }) => {
    const action = f.action as { type: string; json: string } | undefined;
    return action ? { ...f, action: { type: action.type, data: JSON.parse(action.json) } } : f;
  });
}

Deno.test("the Python and TypeScript SDKs say and report caller events alike", async () => {
  const python = await startPythonBrain(PYTHON_BRAIN);
  const typescript = typescriptBrain().serve({ hostname: "127.0.0.1", port: 0, path: "/brain" });
  try {
    const fromTypescript = await script(typescript.url);
    const fromPython = await script(python.url);
    assertEquals(fromPython, fromTypescript);
    const kinds = fromPython.map((f) => {
      const frame = f as { frame: string; action?: { type: string } };
      return frame.action?.type ?? frame.frame;
    });
    assertEquals(kinds, [
      "config",
      "greeting",
      "say",
      "said",
      "say",
      "said",
      "speech",
      "interim",
      "speech",
      "metrics",
      "machine",
      "beep",
      "config",
      "say",
      "config",
      "collected",
      "menu",
    ]);
    assertEquals(fromPython.slice(-5).map((f) => (f as { config?: unknown }).config ?? null), [
      { ...NO_CONFIG, keypad: { sensitive: true } },
      null,
      { ...NO_CONFIG, keypad: { sensitive: false } },
      null,
      null,
    ]);
    assertEquals((fromPython.at(-2) as { action: { data: unknown } }).action.data, {
      digits: "***",
      reason: "terminator",
      prompt_refused: "",
    });
    assertEquals((fromPython.at(-1) as { action: { data: unknown } }).action.data, {
      digits: "4",
      reason: "max_digits",
    });
    const said = fromPython[3] as { action: { data: unknown } };
    assertEquals(said.action.data, {
      turn_id: "t1",
      heard: "You pressed",
      cut_off: true,
      refused: "",
    });
  } finally {
    await typescript.shutdown();
    await python.stop();
  }
});
