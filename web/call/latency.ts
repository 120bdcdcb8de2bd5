/// <reference lib="dom" />
// End of the caller's speech to the bot's first audio, measured on the page from what it really
// captured and played: its own microphone track and the received bot track, each through a
// WebAudio AnalyserNode sampled every 10 ms in one timer (so both share one clock), fed to the
// caller simulator's streaming detector (caller/turn_latency.ts): the end of speech is the last
// sample above the speech threshold once 300 ms of quiet confirm it, the first bot audio the
// first received sample above the bot threshold after it. Messages play no part: a bot-output
// can come before or after the sound.
import { type DetectedTurn, TurnLatencyDetector } from "../../caller/turn_latency.ts";

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

/** One measured turn as the page shows it; `recorded` once the worker answered. */
export interface HeardLatency extends DetectedTurn {
  /** The worker kept it on the turn (true), found no turn for it (false), or has not answered. */
  recorded?: boolean;
}

/** The figures of one call, newest last, and a one-line summary for the page. */
export class LatencyLog {
  readonly turns: HeardLatency[] = [];

  add(t: DetectedTurn): HeardLatency {
    const entry: HeardLatency = { ...t };
    this.turns.push(entry);
    return entry;
  }

  /** "480 ms" per turn, and the median of the call so far. */
  lines(): string[] {
    return this.turns.map((t, i) =>
      `Turn ${i + 1}: ${Math.round(t.ms)} ms${
        t.recorded === false ? " (not kept by the service: no new turn of yours was answered)" : ""
      }`
    );
  }

  median(): number | null {
    if (!this.turns.length) return null;
    const s = this.turns.map((t) => t.ms).sort((a, b) => a - b);
    return s[Math.floor((s.length - 1) / 2)];
  }
}

/** Samples the two tracks and feeds the detector until stopped. */
export class LatencyProbe {
  readonly detector: TurnLatencyDetector;
  #timer: ReturnType<typeof setInterval>;
  #nodes: AudioNode[] = [];

  constructor(
    context: AudioContext,
    mic: MediaStreamTrack,
    bot: MediaStreamTrack,
    onTurn: (t: DetectedTurn) => void,
    intervalMs = 10,
  ) {
    this.detector = new TurnLatencyDetector({}, onTurn);
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
      this.detector.bot(t, botLevel() > BOT_AUDIO_RMS);
      this.detector.caller(t, micLevel() > MIC_SPEECH_RMS);
    }, intervalMs);
  }

  stop(): void {
    clearInterval(this.#timer);
    for (const n of this.#nodes) n.disconnect();
  }
}
