// The project's own caller pipeline run offline over a clip, as fast as the CPU allows: the
// worker's CallerAudio (media/caller_audio/caller_audio.ts) with its VoiceActivity and turn-taking
// machine, fed 20 ms frames in order, exactly as a call feeds it, with every decision read in
// audio time (the machine's only clock), so the figures do not depend on the machine's load.
//
// Silero runs once per clip (scoreClip); each setting then replays those scores through a real
// VoiceActivity (a model that answers with the recorded probabilities: the audio, hence every
// score, is the same whatever the settings). The recogniser is the oracle: at each finish() it
// returns the key's phrases that ended since the last one, at once (recognition latency and
// errors are hidden; docs/turn-taking.md).
import {
  CallerAudio,
  type CallerAudioOptions,
  type CallerHooks,
} from "../../media/caller_audio/caller_audio.ts";
import { RecognitionRouter } from "../../media/engines/routing.ts";
import type {
  RecognitionEngine,
  RecognitionOpenOptions,
  RecognitionStream,
} from "../../media/stt/engine.ts";
import { SILERO_FRAME_SAMPLES, type SileroModel, sileroModel } from "../../media/vad/silero.ts";
import { VoiceActivity } from "../../media/vad/voice_activity.ts";
import type { TurnKey } from "./data.ts";

/** The recorded Silero probabilities of a clip's frames that were not gated, in order. */
export interface Scores {
  probabilities: Float32Array;
}

/** Silero v5 over the clip, once: what the worker's VAD would compute. */
export async function scoreClip(pcm: Int16Array): Promise<Scores> {
  const p: number[] = [];
  const vad = new VoiceActivity(await sileroModel(), {}, {
    onFrame: (f) => f.gated || p.push(f.probability),
  });
  await vad.push(pcm);
  vad.close();
  return { probabilities: Float32Array.from(p) };
}

/** A Silero model that answers with recorded scores (the gated frames never ask it). */
export function replayModel(scores: Scores): SileroModel {
  return {
    path: "replay",
    stream() {
      let i = 0;
      return {
        probability: () => Promise.resolve(scores.probabilities[i++] ?? 0),
        reset: () => (i = 0),
      };
    },
  };
}

/** The oracle recogniser: the key's phrases, each given once, when finish() comes after its end. */
class OracleEngine implements RecognitionEngine {
  readonly name = "oracle";
  readonly kind = "local" as const;
  readonly languages: string[];
  /** Audio time up to which the VAD has decided (set by the runner before each push's events). */
  nowMs = 0;
  #given = 0;

  constructor(language: string, private key: TurnKey) {
    this.languages = [language];
  }

  open(): Promise<RecognitionStream> {
    return Promise.resolve({
      push: () => {},
      onInterim: () => {},
      finish: () => {
        const heard: string[] = [];
        const segs = this.key.segments;
        while (this.#given < segs.length && segs[this.#given].endMs <= this.nowMs) {
          heard.push(segs[this.#given++].text);
        }
        return Promise.resolve({ text: heard.join(" "), audioMs: 0 });
      },
      close: () => {},
    });
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * A real recogniser (pocketsphinx for English) in place of the oracle, with its latency hidden:
 * the runner waits for each finish() before the next frame, so only its words differ.
 */
class AwaitedEngine implements RecognitionEngine {
  readonly kind = "local" as const;
  pending: Promise<unknown>[] = [];
  constructor(private inner: RecognitionEngine) {}
  get name() {
    return this.inner.name;
  }
  get languages() {
    return this.inner.languages;
  }
  async open(language: string, options?: RecognitionOpenOptions): Promise<RecognitionStream> {
    const s = await this.inner.open(language, options);
    return {
      push: (pcm) => s.push(pcm),
      onInterim: (cb) => s.onInterim(cb),
      finish: () => {
        const result = s.finish();
        this.pending.push(result.catch(() => {}));
        return result;
      },
      close: () => s.close(),
    };
  }
  close(): Promise<void> {
    return Promise.resolve(); // the inner engine is the caller's to close
  }
}

/**
 * adaptive: the policy as it ships, or with its voice rules set otherwise (`rules`), or at an
 * agent's interruption sensitivity and turn patience (`sensitivity`; default medium, medium).
 */
export type Setting =
  | {
    mode: "adaptive";
    rules?: CallerAudioOptions["endOfTurn"];
    sensitivity?: CallerAudioOptions["sensitivity"];
    /** Pauses' words go to the brain before the window closes (Config.turns.speculative). */
    speculative?: boolean;
  }
  | { mode: "fixed"; waitMs: number };

/** What the pipeline did over one clip, in audio time (ms from the clip's start). */
export interface Outcome {
  /** Each user turn sent (a speculative one: when it was confirmed): when, and its words. */
  turns: { atMs: number; text: string }[];
  /** Speculative: each turn sent at a pause, when, and whether it was confirmed or dropped. */
  speculated: {
    atMs: number;
    text: string;
    outcome?: "confirmed" | "dropped";
    confirmedAtMs?: number;
  }[];
  /** The bot was interrupted (barge-in) / resumed after a backchannel, at these times. */
  interrupts: number[];
  resumes: number[];
}

const FRAME = 320;
/** Microtask turns to let the oracle's text reach the machine before the next frame. */
const SETTLE = 12;

/**
 * Runs the clip through CallerAudio with `setting`; `botSpeaking`: the bot holds the floor from
 * the start (its reply is playing), as for a backchannel or a barge-in.
 */
export async function runClip(
  pcm: Int16Array,
  key: TurnKey,
  scores: Scores,
  setting: Setting,
  botSpeaking = false,
  language = "en",
  recogniser?: RecognitionEngine,
  /** The phone band's audio tells the recogniser so, as the phone line does. */
  narrowband = false,
): Promise<Outcome> {
  const vad = new VoiceActivity(
    replayModel(scores),
    setting.mode === "fixed" ? { stopMs: setting.waitMs } : {},
  );
  const engine = new OracleEngine(`LANGUAGE_${language.toUpperCase()}`, key);
  const awaited = recogniser ? new AwaitedEngine(recogniser) : undefined;
  const router = new RecognitionRouter([awaited ?? engine], {});
  const out: Outcome = { turns: [], speculated: [], interrupts: [], resumes: [] };
  const speculated = new Map<string, Outcome["speculated"][number]>();
  const at = () => vad.processedMs;
  const none = () => {};
  const hooks: CallerHooks = {
    onSpeechStarted: none,
    onSpeechStopped: none,
    onInterimText: none,
    onFinalText: none,
    onActivity: none,
    onFloorChanged: none,
    onUserTurn: (id, text, _typed, speculative) => {
      if (!speculative) return void out.turns.push({ atMs: at(), text });
      const sent = { atMs: at(), text };
      speculated.set(id, sent);
      out.speculated.push(sent);
    },
    onTurnConfirmed: (id) => {
      const sent = speculated.get(id)!;
      sent.outcome = "confirmed";
      sent.confirmedAtMs = at();
      out.turns.push({ atMs: at(), text: sent.text });
    },
    onSpeculationDropped: (id) => void (speculated.get(id)!.outcome = "dropped"),
    onUserIdle: none,
    pauseBot: none,
    resumeBot: () => out.resumes.push(at()),
    interruptBot: () => out.interrupts.push(at()),
    cancelTurn: none,
    onRecognitionFailed: (err) => {
      throw err;
    },
    onVadFailed: (err) => {
      throw err;
    },
  };
  const channel = narrowband ? "narrowband" as const : "wideband" as const;
  const lang = `LANGUAGE_${language.toUpperCase()}`;
  const caller = new CallerAudio({
    vad,
    recognition: await router.open(lang, undefined, undefined, channel),
    openRecognition: (l) => router.open(l, undefined, undefined, channel),
    language: lang,
    mode: setting.mode,
    endOfTurn: setting.mode === "adaptive" ? setting.rules : undefined,
    sensitivity: setting.mode === "adaptive" ? setting.sensitivity : undefined,
    speculative: setting.mode === "adaptive" ? setting.speculative : undefined,
    hooks,
    record: {
      utteranceStarted: none,
      utteranceMark: none,
      utteranceRecognisedBy: none,
      utteranceSent: none,
      utteranceDropped: none,
      typedSent: none,
    },
    log: { add: none },
  });
  if (botSpeaking) {
    caller.floor({ type: "greeting_expected" });
    caller.floor({ type: "playback_started", turnId: "greeting" });
    caller.botSpeaking(true);
  }
  try {
    for (let i = 0; i < pcm.length; i += FRAME) {
      // The frames this push completes are decided up to here before their events are acted on.
      engine.nowMs = (Math.floor((i + FRAME) / SILERO_FRAME_SAMPLES) * SILERO_FRAME_SAMPLES) / 16;
      await caller.push(pcm.subarray(i, i + FRAME));
      while (awaited?.pending.length) await awaited.pending.shift();
      for (let s = 0; s < SETTLE; s++) await null;
    }
  } finally {
    caller.close();
    await router.close();
  }
  return out;
}
