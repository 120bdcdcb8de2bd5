/**
 * Turns a call's 16 kHz mono PCM into speech start/end events with Silero v5.
 *
 * Audio comes in chunks of any size (the worker pushes 320 samples per 20 ms Opus packet); it is
 * cut into 512-sample (32 ms) frames and each frame is run through the call's own Silero stream,
 * one at a time, in order. Timestamps are audio time: ms since the first sample pushed, so the
 * same audio always gives the same events however it was chunked and however fast it ran. It keeps
 * no audio: the pre-roll a recogniser hears from a turn's onset is media/caller_audio/pre_roll.ts.
 *
 * Decisions (Pipecat's start/stop windows, silero-vad's hysteresis):
 * - a frame is speech when p >= positiveThreshold; speech starts once consecutive speech frames
 *   cover startMs (a frame below positiveThreshold before that drops the run);
 * - while speaking, a frame with p < negativeThreshold starts a silence run, a frame with
 *   p >= positiveThreshold ends it, frames in between extend it; the turn ends once the silence
 *   run covers stopMs.
 * - with pauseMs set (adaptive end of turn), a silence run that covers pauseMs is reported as a
 *   `pause` (the turn-taking machine then finishes recognition speculatively and decides when the
 *   turn ends), and speech coming back after it as a `resume`; speech_end at stopMs stays the
 *   upper bound. endSpeech() closes the utterance when the machine has ended the turn earlier.
 */

import {
  SILERO_FRAME_MS,
  SILERO_FRAME_SAMPLES,
  type SileroModel,
  sileroModel,
  type SileroStream,
} from "./silero.ts";

export interface VadSettings {
  /** A frame at or above this probability counts as speech (default 0.5). */
  positiveThreshold?: number;
  /** While speaking, a frame below this counts as silence (default 0.35). */
  negativeThreshold?: number;
  /** Speech must last this long to start a turn (default 200 ms; ~64 ms for barge-in). */
  startMs?: number;
  /** Silence this long ends the turn (default 600 ms). */
  stopMs?: number;
  /** Silence this long while speaking is reported as a `pause` (default 0: never). */
  pauseMs?: number;
  /**
   * Frames whose RMS is below this level (dBFS) are taken as silence (probability 0) without
   * running the model, to save CPU on muted or noise-suppressed microphones. Default -60;
   * -Infinity runs the model on every frame.
   */
  silenceFloorDbfs?: number;
}

export const DEFAULT_VAD_SETTINGS: Readonly<Required<VadSettings>> = Object.freeze({
  positiveThreshold: 0.5,
  negativeThreshold: 0.35,
  startMs: 200,
  stopMs: 600,
  pauseMs: 0,
  silenceFloorDbfs: -60,
});

export type VadEvent =
  /** atMs: end of the frame that completed startMs; onsetMs: start of the run's first frame. */
  | { type: "speech_start"; atMs: number; onsetMs: number }
  /** atMs: end of the frame that completed stopMs; speechMs: onset to start of the silence run. */
  | { type: "speech_end"; atMs: number; speechMs: number }
  /** Silence covered pauseMs: atMs ends that frame, silenceStartMs is where the silence began. */
  | { type: "pause"; atMs: number; silenceStartMs: number; speechMs: number }
  /** Speech came back after a pause: onsetMs starts its first frame, pauseMs is the silence. */
  | { type: "resume"; atMs: number; onsetMs: number; pauseMs: number };

/** What the model said about one frame (for meters, logs and tuning). */
export interface VadFrame {
  /** Audio time of the frame's start and end, in ms. */
  startMs: number;
  endMs: number;
  probability: number;
  /** True when the frame was below silenceFloorDbfs and the model was not run. */
  gated: boolean;
}

export interface VoiceActivityOptions {
  /** Called for every frame, in order, before any event that frame produces. */
  onFrame?: (frame: VadFrame) => void;
}

type State = "quiet" | "starting" | "speaking" | "stopping";

export class VoiceActivity {
  readonly #stream: SileroStream;
  readonly #settings: Required<VadSettings>;
  readonly #onFrame?: (frame: VadFrame) => void;

  // Framing: the frame being filled, and whole frames waiting for the model.
  #filling: Float32Array;
  #filled = 0;
  #spare: Float32Array[] = [];
  #tail: Promise<unknown> = Promise.resolve();
  #closed = false;

  // Decision state, advanced by frames in order.
  #frames = 0;
  #state: State = "quiet";
  #runStartMs = 0;
  #onsetMs = 0;
  #silenceStartMs = 0;
  /** A pause was reported for the current silence run. */
  #paused = false;
  #gateRms = 0;

  constructor(model: SileroModel, settings: VadSettings = {}, options: VoiceActivityOptions = {}) {
    this.#stream = model.stream();
    this.#settings = { ...DEFAULT_VAD_SETTINGS };
    this.configure(settings);
    this.#onFrame = options.onFrame;
    this.#filling = new Float32Array(SILERO_FRAME_SAMPLES);
  }

  /** A VoiceActivity on the process-wide Silero model. */
  static async create(
    settings: VadSettings = {},
    options: VoiceActivityOptions = {},
  ): Promise<VoiceActivity> {
    return new VoiceActivity(await sileroModel(), settings, options);
  }

  /** The settings in force. */
  get settings(): Readonly<Required<VadSettings>> {
    return { ...this.#settings };
  }

  /** Changes settings from the next frame on; omitted fields keep their value. */
  configure(update: VadSettings): void {
    const next = { ...this.#settings };
    for (const [k, v] of Object.entries(update) as [keyof VadSettings, number | undefined][]) {
      if (v !== undefined) next[k] = v;
    }
    const { positiveThreshold: pos, negativeThreshold: neg, startMs, stopMs, pauseMs } = next;
    if (!(pos >= 0 && pos <= 1)) throw new RangeError(`positiveThreshold out of 0..1: ${pos}`);
    if (!(neg >= 0 && neg <= pos)) {
      throw new RangeError(`negativeThreshold must be in 0..positiveThreshold: ${neg}`);
    }
    if (!(startMs >= 0) || !(stopMs >= 0) || !(pauseMs >= 0)) {
      throw new RangeError(
        `startMs, stopMs and pauseMs must be >= 0: ${startMs}, ${stopMs}, ${pauseMs}`,
      );
    }
    if (Number.isNaN(next.silenceFloorDbfs)) throw new RangeError("silenceFloorDbfs is NaN");
    Object.assign(this.#settings, next);
    // Compare mean squares instead of taking a log per frame.
    this.#gateRms = 10 ** (next.silenceFloorDbfs / 20);
  }

  /** Shorthand for configure({ startMs }): e.g. a short window for barge-in while the bot speaks. */
  setStartMs(ms: number): void {
    this.configure({ startMs: ms });
  }

  /** Between a speech_start and its speech_end (as of the frames processed so far). */
  get inSpeech(): boolean {
    return this.#state === "speaking" || this.#state === "stopping";
  }

  /**
   * The turn ended before stopMs (the turn-taking machine decided at a pause): the utterance is
   * over, no speech_end follows, and speech after this is a new speech_start (with its start
   * window, so a breath or a blip does not reopen the turn). Takes effect from the next frame.
   */
  endSpeech(): void {
    if (this.inSpeech) this.#state = "quiet";
    this.#paused = false;
  }

  /** Audio time up to which frames have been decided, in ms. */
  get processedMs(): number {
    return this.#frames * SILERO_FRAME_MS;
  }

  /**
   * Adds PCM (16 kHz mono). The samples are copied before this returns, so a reused buffer may be
   * passed. Resolves with the events of the frames this chunk completed, after every earlier
   * push's frames; inference never runs twice at once for one VoiceActivity.
   */
  push(pcm: Int16Array): Promise<VadEvent[]> {
    if (this.#closed) return Promise.reject(new Error("VoiceActivity is closed"));
    const frames: Float32Array[] = [];
    for (let i = 0; i < pcm.length;) {
      const n = Math.min(pcm.length - i, SILERO_FRAME_SAMPLES - this.#filled);
      const f = this.#filling;
      for (let j = 0; j < n; j++) f[this.#filled + j] = pcm[i + j] / 32768;
      this.#filled += n;
      i += n;
      if (this.#filled === SILERO_FRAME_SAMPLES) {
        frames.push(f);
        this.#filling = this.#spare.pop() ?? new Float32Array(SILERO_FRAME_SAMPLES);
        this.#filled = 0;
      }
    }
    const run = this.#tail.then(() => this.#decide(frames));
    // A failed inference rejects its own push only; later pushes still run.
    this.#tail = run.catch(() => {});
    return run;
  }

  /** Stops accepting audio. Frames already pushed are still decided. */
  close(): void {
    this.#closed = true;
  }

  async #decide(frames: Float32Array[]): Promise<VadEvent[]> {
    const events: VadEvent[] = [];
    for (const frame of frames) {
      let p = 0;
      const gated = meanSquare(frame) < this.#gateRms * this.#gateRms;
      try {
        if (!gated) p = await this.#stream.probability(frame);
      } finally {
        this.#spare.push(frame);
      }
      const startMs = this.#frames * SILERO_FRAME_MS;
      const endMs = startMs + SILERO_FRAME_MS;
      this.#frames++;
      this.#onFrame?.({ startMs, endMs, probability: p, gated });
      const event = this.#step(p, startMs, endMs);
      if (event) events.push(event);
    }
    return events;
  }

  #step(p: number, startMs: number, endMs: number): VadEvent | null {
    const { positiveThreshold, negativeThreshold, startMs: needStart, stopMs, pauseMs } =
      this.#settings;
    switch (this.#state) {
      case "quiet":
      case "starting":
        if (p < positiveThreshold) {
          this.#state = "quiet";
          return null;
        }
        if (this.#state === "quiet") {
          this.#state = "starting";
          this.#runStartMs = startMs;
        }
        if (endMs - this.#runStartMs < framesMs(needStart)) return null;
        this.#state = "speaking";
        this.#onsetMs = this.#runStartMs;
        return { type: "speech_start", atMs: endMs, onsetMs: this.#onsetMs };
      case "speaking":
      case "stopping": {
        if (p >= positiveThreshold) {
          this.#state = "speaking";
          if (!this.#paused) return null;
          this.#paused = false;
          return {
            type: "resume",
            atMs: endMs,
            onsetMs: startMs,
            pauseMs: startMs - this.#silenceStartMs,
          };
        }
        if (this.#state === "speaking") {
          if (p >= negativeThreshold) return null;
          this.#state = "stopping";
          this.#silenceStartMs = startMs;
        }
        const silentMs = endMs - this.#silenceStartMs;
        if (silentMs < framesMs(stopMs)) {
          if (pauseMs <= 0 || this.#paused || silentMs < framesMs(pauseMs)) return null;
          this.#paused = true;
          return {
            type: "pause",
            atMs: endMs,
            silenceStartMs: this.#silenceStartMs,
            speechMs: this.#silenceStartMs - this.#onsetMs,
          };
        }
        this.#state = "quiet";
        this.#paused = false;
        return {
          type: "speech_end",
          atMs: endMs,
          speechMs: this.#silenceStartMs - this.#onsetMs,
        };
      }
    }
  }
}

/** A window in whole frames, rounded to nearest and at least one, as Pipecat counts them. */
function framesMs(ms: number): number {
  return Math.max(1, Math.round(ms / SILERO_FRAME_MS)) * SILERO_FRAME_MS;
}

function meanSquare(frame: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < frame.length; i++) sum += frame[i] * frame[i];
  return sum / frame.length;
}
