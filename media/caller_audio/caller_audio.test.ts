// The caller's audio as one stage: frames in, the caller's events out through its hooks. The VAD
// is the real Silero one and the caller speaks with festival's voice; recognition is pocketsphinx
// where the words matter, and a recorder (a stand-in engine keeping every sample it is pushed)
// where the exact audio the recogniser hears is the point.
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { concat, mix, silence, whiteNoise } from "../../tests/helpers/test_signals.ts";
import type { NoiseSuppression } from "../../common/noise_suppression.ts";
import type { SensitivityLevel, TurnSensitivity } from "../../common/turn_sensitivity.ts";
import { speech16k } from "../../tests/helpers/test_speech.ts";
import { speechWav } from "../../tests/helpers/audio.ts";
import { readWav } from "../../caller/wav.ts";
import { RecognitionRouter } from "../engines/routing.ts";
import { PocketsphinxEngine } from "../stt/pocketsphinx.ts";
import type { RecognitionEngine, RecognitionStream } from "../stt/engine.ts";
import { VoiceActivity } from "../vad/voice_activity.ts";
import { type SileroModel, sileroModel } from "../vad/silero.ts";
import { TurnLog } from "../call/turn_record.ts";
import {
  BARGE_IN_START_MS,
  CallerAudio,
  type CallerHooks,
  LISTENING_START_MS,
  ONSET_PRE_ROLL_MS,
} from "./caller_audio.ts";

const EN = "LANGUAGE_EN";

/** Every hook call, in order, as "name arg…". */
class Heard implements CallerHooks {
  calls: string[] = [];
  #add = (...parts: unknown[]) => this.calls.push(parts.join(" "));
  onSpeechStarted = () => this.#add("speech_started");
  onSpeechStopped = () => this.#add("speech_stopped");
  onInterimText = (_text: string) => {};
  onFinalText = (text: string) => this.#add("final_text", text);
  onActivity = () => {};
  onFloorChanged = () => {};
  onUserTurn = (turnId: string, text: string, typed: boolean) =>
    this.#add(typed ? "typed_turn" : "user_turn", turnId, text);
  onUserIdle = (turnId: string) => this.#add("user_idle", turnId);
  pauseBot = (turnId: string, windowMs: number) => this.#add("pause_bot", turnId, windowMs);
  resumeBot = (turnId: string, text: string) => this.#add("resume_bot", turnId, text);
  interruptBot = (turnId: string, windowMs: number, typed: boolean) =>
    typed ? this.#add("typed_cut", turnId) : this.#add("interrupt", turnId, windowMs);
  cancelTurn = (turnId: string) => this.#add("cancel", turnId);
  onRecognitionFailed = (err: Error) => this.#add("recognition_failed", err.message);
  onVadFailed = (err: Error) => this.#add("vad_failed", err.message);
  named(prefix: string) {
    return this.calls.filter((c) => c.startsWith(prefix));
  }
}

/** A stand-in recogniser keeping every sample each utterance is pushed; its text is scripted. */
class Recorder implements RecognitionEngine {
  kind = "local" as const;
  streams: { utterances: Int16Array[][]; closed: boolean }[] = [];
  constructor(readonly name: string, readonly languages: string[], public text = "hello") {}
  open(_language: string): Promise<RecognitionStream> {
    const s = { utterances: [[]] as Int16Array[][], closed: false };
    this.streams.push(s);
    return Promise.resolve({
      push: (pcm: Int16Array) => s.utterances.at(-1)!.push(pcm.slice()),
      onInterim: () => {},
      finish: () => {
        s.utterances.push([]);
        return Promise.resolve({ text: this.text, audioMs: 0 });
      },
      close: () => s.closed = true,
    });
  }
  close() {
    return Promise.resolve();
  }
}

interface Setup {
  caller: CallerAudio;
  heard: Heard;
  vad: VoiceActivity;
  record: TurnLog;
  log: { kind: string; data: unknown }[];
}

async function setup(
  recognition: RecognitionRouter,
  mode?: "adaptive" | "fixed",
  noiseSuppression?: NoiseSuppression,
  vadModel?: SileroModel,
  sensitivity?: Required<TurnSensitivity>,
): Promise<Setup> {
  const heard = new Heard();
  const vad = vadModel ? new VoiceActivity(vadModel) : await VoiceActivity.create();
  const record = new TurnLog();
  const log: { kind: string; data: unknown }[] = [];
  const caller = new CallerAudio({
    vad,
    recognition: await recognition.open(EN),
    openRecognition: (language) => recognition.open(language),
    language: EN,
    mode,
    noiseSuppression,
    sensitivity,
    hooks: heard,
    record,
    log: { add: (_source, kind, data) => log.push({ kind, data }) },
  });
  return { caller, heard, vad, record, log };
}

/** Pushes `pcm` in 20 ms frames, each once the VAD has acted on the one before (as in time). */
async function speak(caller: CallerAudio, pcm: Int16Array): Promise<void> {
  for (let i = 0; i < pcm.length; i += 320) await caller.push(pcm.subarray(i, i + 320));
}

/** Waits until `done()` holds (recognition runs on its own thread), at most `ms`. */
async function until(done: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!done() && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
}

Deno.test("a caller's utterance comes out as speech started, its words, speech stopped and one user turn", async () => {
  const engine = await PocketsphinxEngine.create();
  const { caller, heard, record, log } = await setup(new RecognitionRouter([engine], {}));
  try {
    await speak(caller, concat(await speech16k("I would like to book a table"), silence(2500)));
    await until(() => heard.named("user_turn").length > 0);
    const calls = heard.calls;
    assertEquals(calls[0], "speech_started");
    const turn = heard.named("user_turn");
    assertEquals(turn.length, 1, calls.join(" | "));
    assert(turn[0].startsWith("user_turn t1 ") && turn[0].includes("table"), turn[0]);
    // The page hears the end of speech before the brain gets the turn.
    assert(calls.indexOf("speech_stopped") < calls.indexOf(turn[0]), calls.join(" | "));
    const [t1] = record.records();
    assertEquals(t1.turn_id, "t1");
    assert(log.some((e) => e.kind === "final_text"), "the final text is logged");
  } finally {
    caller.close();
    await engine.close();
  }
});

Deno.test("the recogniser hears the utterance from the pre-roll before the VAD's onset, and only the unit feeds it", async () => {
  const recorder = new Recorder("recorder", [EN]);
  const { caller, heard, log } = await setup(new RecognitionRouter([recorder], {}));
  try {
    const pcm = concat(silence(600), await speech16k("Cancel my order please"), silence(2500));
    await speak(caller, pcm);
    await until(() => heard.named("user_turn").length > 0);
    const started = log.find((e) => e.kind === "speech_started")!.data as { onset_ms: number };
    // The first utterance: from its onset to the caller's first pause.
    const heardAudio = concat(...recorder.streams[0].utterances[0]);
    // Contiguous from ONSET_PRE_ROLL_MS before the onset, sample for sample what was pushed.
    const from = (started.onset_ms - ONSET_PRE_ROLL_MS) * 16;
    assert(from > 0, `onset ${started.onset_ms} ms leaves room for the pre-roll`);
    assertEquals(heardAudio, pcm.subarray(from, from + heardAudio.length));
    // And it reaches past the speech: the recogniser had the utterance to its pause.
    assert(heardAudio.length > (started.onset_ms + 500) * 16 - from, "the utterance was fed");
  } finally {
    caller.close();
  }
});

Deno.test("speech over the bot pauses it with the barge-in window, and words that are no backchannel interrupt it", async () => {
  const engine = await PocketsphinxEngine.create();
  const { caller, heard } = await setup(new RecognitionRouter([engine], {}));
  try {
    caller.floor({ type: "greeting_expected" });
    assertEquals(caller.accept("greeting"), "accepted");
    caller.floor({ type: "playback_started", turnId: "greeting" });
    caller.botSpeaking(true);
    await speak(caller, concat(await speech16k("Cancel my order please"), silence(2500)));
    await until(() => heard.named("user_turn").length > 0);
    assertEquals(heard.named("pause_bot"), [`pause_bot greeting ${BARGE_IN_START_MS}`]);
    assertEquals(heard.named("interrupt"), [`interrupt greeting ${BARGE_IN_START_MS}`]);
    assertEquals(heard.named("user_turn").length, 1);
    // With the bot quiet the VAD is back to its listening window.
    caller.botSpeaking(false);
    heard.calls = [];
    caller.floor({ type: "playback_started", turnId: "t1" }); // t1's reply plays (no window change)
    await speak(caller, concat(await speech16k("Cancel my order please"), silence(2500)));
    await until(() => heard.named("interrupt").length > 0);
    assertEquals(heard.named("pause_bot"), [`pause_bot t1 ${LISTENING_START_MS}`]);
  } finally {
    caller.close();
    await engine.close();
  }
});

Deno.test("a language change moves recognition to a stream in the new language and closes the old one", async () => {
  const en = new Recorder("en-recorder", [EN], "hello");
  const hi = new Recorder("hi-recorder", ["LANGUAGE_HI"], "namaste");
  const { caller, heard } = await setup(new RecognitionRouter([en, hi], {}));
  try {
    caller.language = "LANGUAGE_HI";
    await caller.swapRecognition("LANGUAGE_HI");
    assertEquals(en.streams[0].closed, true);
    assertEquals(hi.streams.length, 1);
    await speak(caller, concat(await speech16k("Cancel my order please"), silence(2500)));
    await until(() => heard.named("user_turn").length > 0);
    assertEquals(heard.named("user_turn"), ["user_turn t1 namaste"]);
    assertEquals(en.streams[0].utterances.flat().length, 0, "the old stream heard nothing");
  } finally {
    caller.close();
  }
  assertEquals(hi.streams[0].closed, true, "close() closes the stream in use");
});

Deno.test("fixed end of turn: the VAD's own end of speech ends the utterance", async () => {
  const recorder = new Recorder("recorder", [EN], "book a table");
  const { caller, heard, vad } = await setup(new RecognitionRouter([recorder], {}), "fixed");
  try {
    assertEquals(vad.settings.pauseMs, 0, "no pauses are asked of the VAD in fixed mode");
    await speak(caller, concat(await speech16k("I would like to book a table"), silence(1500)));
    await until(() => heard.named("user_turn").length > 0);
    assertEquals(heard.calls, [
      "speech_started",
      "speech_stopped",
      "final_text book a table",
      "user_turn t1 book a table",
    ]);
  } finally {
    caller.close();
  }
});

Deno.test("a turn typed while the caller speaks goes after their words, marked and recorded typed", async () => {
  const recorder = new Recorder("recorder", [EN], "book a table");
  const { caller, heard, record, log } = await setup(new RecognitionRouter([recorder], {}));
  try {
    const pcm = concat(await speech16k("I would like to book a table"), silence(2500));
    let i = 0;
    for (; i < pcm.length && !log.some((e) => e.kind === "speech_started"); i += 320) {
      await caller.push(pcm.subarray(i, i + 320));
    }
    assert(i < pcm.length, "the VAD never heard the caller start");
    caller.typed("  order 42 ");
    assertEquals(heard.named("typed"), [], "the caller holds the floor: the typed turn waits");
    await speak(caller, pcm.subarray(i));
    await until(() => heard.named("typed_turn").length > 0);
    assertEquals(
      heard.calls.filter((c) => /^(user_turn|typed_)/.test(c)),
      ["user_turn t1 book a table", "typed_cut t1", "typed_turn t2 order 42"],
    );
    assertEquals(
      record.records().map((t) => [t.turn_id, t.trigger, t.user_text]),
      [["t1", "speech", "book a table"], ["t2", "typed", "order 42"]],
    );
    assertEquals(log.find((e) => e.kind === "typed_text")?.data, { text: "order 42" });
  } finally {
    caller.close();
  }
});

/** Mean power in dB of `pcm`. */
const powerDb = (pcm: Int16Array) =>
  10 * Math.log10(pcm.reduce((s, v) => s + v * v, 0) / pcm.length);

for (const suppression of ["rnnoise", "off", undefined] as const) {
  const denoised = suppression === "rnnoise";
  Deno.test(`a caller with noise suppression ${suppression ?? "not set"} is heard ${denoised ? "without" : "with"} the room's noise`, async () => {
    const recorder = new Recorder("recorder", [EN]);
    const { caller, heard, log } = await setup(
      new RecognitionRouter([recorder], {}),
      undefined,
      suppression,
    );
    try {
      const speech = concat(
        silence(1500),
        await speech16k("Cancel my order please"),
        silence(2500),
      );
      const pcm = mix(speech, whiteNoise(speech.length / 16, -40));
      await speak(caller, pcm);
      await until(() => heard.named("user_turn").length > 0);
      const started = log.find((e) => e.kind === "speech_started")!.data as { onset_ms: number };
      // The pre-roll's first 100 ms, before the onset: the room alone.
      const room = concat(...recorder.streams[0].utterances[0]).subarray(0, 1600);
      const from = (started.onset_ms - ONSET_PRE_ROLL_MS) * 16;
      const sent = pcm.subarray(from, from + 1600);
      const drop = powerDb(sent) - powerDb(room);
      if (denoised) assert(drop >= 10, `the room's noise fell by ${drop.toFixed(1)} dB only`);
      else assertEquals(room, sent, "heard sample for sample as sent");
    } finally {
      caller.close();
    }
  });
}

/** The real Silero model, whose streams fail every frame after the first `good` (an ONNX fault). */
async function failingAfter(good: number): Promise<SileroModel> {
  const model = await sileroModel();
  return {
    path: model.path,
    stream() {
      const real = model.stream();
      let frames = 0;
      return {
        probability: (frame) =>
          ++frames > good
            ? Promise.reject(new Error("onnxruntime: Non-zero status code returned"))
            : real.probability(frame),
        reset: () => real.reset(),
      };
    },
  };
}

Deno.test("a VAD that fails on the caller's audio is told to the call once, and nothing after close is", async () => {
  const { caller, heard } = await setup(
    new RecognitionRouter([new Recorder("recorder", [EN])], {}),
    undefined,
    undefined,
    await failingAfter(10),
  );
  try {
    // Loud enough that no frame is gated below the VAD's floor: every frame runs the model.
    await speak(caller, whiteNoise(1000, -20));
    assertEquals(heard.named("vad_failed"), [
      "vad_failed onnxruntime: Non-zero status code returned",
    ]);
  } finally {
    caller.close();
  }
  // Frames pushed after close are refused by the VAD: not a failure of the call's.
  await speak(caller, whiteNoise(100, -20));
  assertEquals(heard.named("vad_failed").length, 1);
});

Deno.test("adaptive: a statement's final fall ends complete words after the pause itself, not a number", async () => {
  // espeak-ng's full stop falls; the recogniser's words are scripted so only the voice differs.
  const said = (await readWav(await speechWav("could you send me the bill by email.", 0.3, 16000)))
    .samples;
  const windowFor = async (text: string) => {
    const { caller, log } = await setup(
      new RecognitionRouter([new Recorder("rec", [EN], text)], {}),
    );
    try {
      await speak(caller, concat(said, silence(1500)));
      const stopped = log.find((e) => e.kind === "speech_stopped")?.data as { window_ms: number };
      return stopped?.window_ms;
    } finally {
      caller.close();
    }
  };
  assertEquals(await windowFor("could you send me the bill by email"), 160);
  assertEquals(await windowFor("a table for four"), 250);
});

for (
  const [level, window, verdict] of [["low", 160, "resume_bot"], ["high", 64, "interrupt"]] as const
) {
  Deno.test(`interruption sensitivity ${level}: the bot is held after ${window} ms of speech and "yeah" ${verdict === "interrupt" ? "cuts" : "resumes"} it`, async () => {
    const sensitivity = {
      interruption_sensitivity: level as SensitivityLevel,
      turn_patience: "medium" as const,
    };
    const rec = new RecognitionRouter([new Recorder("rec", [EN], "yeah")], {});
    const { caller, heard } = await setup(rec, undefined, undefined, undefined, sensitivity);
    try {
      caller.floor({ type: "greeting_expected" });
      caller.floor({ type: "playback_started", turnId: "greeting" });
      caller.botSpeaking(true);
      await speak(caller, concat(await speech16k("yeah"), silence(1500)));
      await until(() => heard.named(verdict).length > 0, 3000);
      assertEquals(heard.named("pause_bot"), [`pause_bot greeting ${window}`]);
      assertEquals(heard.named(verdict).length, 1, heard.calls.join(" | "));
    } finally {
      caller.close();
    }
  });
}
