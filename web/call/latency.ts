/// <reference lib="dom" />
// End of the caller's speech to the bot's first audio, measured on the page from what it really
// captured and played: its own microphone track and the received bot track, each through a
// WebAudio AnalyserNode sampled every 10 ms in one timer (so both share one clock), fed to the
// caller simulator's streaming detector (caller/turn_latency.ts): the end of speech is the last
// sample above the speech threshold once 300 ms of quiet confirm it, the first bot audio the
// first received sample above the bot threshold after it. Messages play no part: a bot-output
// can come before or after the sound.
import { type DetectedTurn, TurnLatencyDetector } from "../../caller/turn_latency.ts";
import { type TypedOutcome, TypedWaits } from "./typed_wait.ts";

/** RMS (float samples, full scale 1) above which the microphone carries speech. */
export const MIC_SPEECH_RMS = 0.015;
/** RMS above which the bot track carries the bot's voice: 300 of 32768, the simulator's level. */
export const BOT_AUDIO_RMS = 300 / 32768;

/** RMS of float samples. */
export function rmsOf(buf: Float32Array): number {
  let sum = 0;
  for (const v of buf) sum += v * v;
  return Math.sqrt(sum / buf.length);
}

/** One turn as the page lists it: what the caller said or typed, and its wait. */
export interface HeardLatency {
  /** The caller's words (the final transcript of the turn, or the typed line); "" if unknown. */
  said: string;
  typed: boolean;
  /** End of speech (or sending the typed line) to the first bot audio heard; null: not measured. */
  ms: number | null;
  /** Why there is no figure. */
  why?: string;
  /** The worker kept it on the turn (true), found no turn for it (false), or has not answered. */
  recorded?: boolean;
}

/** The figures of one call, oldest first, and one line per turn for the page. */
export class LatencyLog {
  readonly turns: HeardLatency[] = [];

  /** A spoken turn's figure, labelled with its words. */
  spoken(t: DetectedTurn, said: string): HeardLatency {
    const entry: HeardLatency = { said, typed: false, ms: t.ms };
    this.turns.push(entry);
    return entry;
  }

  /** A typed line's outcome. */
  typed(o: TypedOutcome): HeardLatency {
    const entry: HeardLatency = { said: o.text, typed: true, ms: o.ms };
    if (o.ms === null) entry.why = o.why;
    this.turns.push(entry);
    return entry;
  }

  /** '"what are your hours": 480 ms', '"hours" (typed): 520 ms', or why there is no figure. */
  lines(): string[] {
    return this.turns.map((t) => {
      const who = `${t.said ? `"${t.said}"` : "(words not recognised)"}${
        t.typed ? " (typed)" : ""
      }`;
      const figure = t.ms === null ? `not measured (${t.why})` : `${Math.round(t.ms)} ms`;
      const kept = t.recorded === false
        ? " (not kept by the service: no new turn of yours was answered)"
        : "";
      return `${who}: ${figure}${kept}`;
    });
  }

  median(): number | null {
    const s = this.turns.flatMap((t) => t.ms === null ? [] : [t.ms]).sort((a, b) => a - b);
    return s.length ? s[Math.floor((s.length - 1) / 2)] : null;
  }
}

/** Samples the two tracks and feeds the detector and the typed lines' waits until stopped. */
export class LatencyProbe {
  readonly detector: TurnLatencyDetector;
  readonly typed: TypedWaits;
  #timer: ReturnType<typeof setInterval>;
  #nodes: AudioNode[] = [];

  constructor(
    context: AudioContext,
    mic: MediaStreamTrack,
    bot: MediaStreamTrack,
    onTurn: (t: DetectedTurn) => void,
    onTyped: (o: TypedOutcome) => void,
    intervalMs = 10,
  ) {
    this.detector = new TurnLatencyDetector({}, onTurn);
    this.typed = new TypedWaits(onTyped);
    const tap = (track: MediaStreamTrack) => {
      const source = context.createMediaStreamSource(new MediaStream([track]));
      const analyser = context.createAnalyser();
      analyser.fftSize = 512; // ~10.7 ms at 48 kHz: one window per sample period
      source.connect(analyser); // an analyser needs no destination to be fed
      this.#nodes.push(source, analyser);
      const buf = new Float32Array(analyser.fftSize);
      return () => (analyser.getFloatTimeDomainData(buf), rmsOf(buf));
    };
    const micLevel = tap(mic), botLevel = tap(bot);
    this.#timer = setInterval(() => {
      const t = performance.now();
      const loud = botLevel() > BOT_AUDIO_RMS;
      this.detector.bot(t, loud);
      this.typed.bot(t, loud);
      this.detector.caller(t, micLevel() > MIC_SPEECH_RMS);
    }, intervalMs);
  }

  /** The page is sending a typed line now. */
  typedSent(text: string): void {
    this.typed.sent(performance.now(), text);
  }

  stop(): void {
    clearInterval(this.#timer);
    for (const n of this.#nodes) n.disconnect();
  }
}
