// Messages between EspeakEngine (media worker thread) and espeak_thread.ts (its Worker).
import type { WordTiming } from "./engine.ts";

/** The rate every chunk is resampled to. */
export const OUTPUT_RATE = 48000;

/** `cancel` is an Int32 the engine sets to a job id to stop that job. */
export type ToThread =
  | { type: "init"; cancel: SharedArrayBuffer; quality: number; warm: string[] }
  | { type: "synth"; id: number; text: string; voice: string }
  /** Test hook: the next job crashes the thread after `afterChunks` chunks (0: at once). */
  | { type: "crash"; afterChunks: number };

export type FromThread =
  | { type: "ready"; ms: number }
  | { type: "init_error"; message: string }
  | { type: "chunk"; id: number; pcm: Int16Array; words: WordTiming[] }
  | { type: "done"; id: number; stopped: boolean; ms: number }
  | { type: "error"; id: number; message: string };
