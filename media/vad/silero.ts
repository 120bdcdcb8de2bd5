/**
 * Silero VAD v5 run in-process by onnxruntime-node (native CPU build).
 *
 * One InferenceSession per worker process, shared by every call; each call gets a stream with its
 * own recurrent state and 64-sample context. The model file is the one @ricky0123/vad-web ships.
 *
 * Framing follows @ricky0123/vad-web's dist/models/silero.js (and silero-vad's OnnxWrapper): each
 * 512-sample frame is fed with the last 64 samples of the previous frame in front, so the input is
 * [1, 576]; `stateN` is fed back as the next `state`.
 */

import { createRequire } from "node:module";
import * as ort from "onnxruntime-node";

/** Samples per Silero v5 frame at 16 kHz (32 ms). */
export const SILERO_FRAME_SAMPLES = 512;
/** Samples of the previous frame prepended to each frame. */
export const SILERO_CONTEXT_SAMPLES = 64;
export const SILERO_SAMPLE_RATE = 16000;
/** Audio covered by one frame, in ms. */
export const SILERO_FRAME_MS = (SILERO_FRAME_SAMPLES * 1000) / SILERO_SAMPLE_RATE;

const STATE_SIZE = 2 * 1 * 128;

/** One caller's view of the shared model: its own recurrent state and context. */
export interface SileroStream {
  /**
   * Speech probability (0..1) of one 512-sample frame of 16 kHz mono audio in -1..1. Calls must
   * be serial: a second call while one is in flight throws (the input buffer is reused).
   */
  probability(frame: Float32Array): Promise<number>;
  /** Forgets the recurrent state and context (as at creation). */
  reset(): void;
}

export interface SileroModel {
  /** Absolute path of the .onnx file in use. */
  readonly path: string;
  stream(): SileroStream;
}

/** Path of silero_vad_v5.onnx inside the installed @ricky0123/vad-web package. */
export function sileroModelPath(): string {
  const pkg = createRequire(import.meta.url).resolve("@ricky0123/vad-web/package.json");
  return pkg.replace(/package\.json$/, "dist/silero_vad_v5.onnx");
}

let shared: Promise<SileroModel> | null = null;

/** The process-wide model, loaded on first use. A failed load is not cached, so it can be retried. */
export function sileroModel(): Promise<SileroModel> {
  shared ??= loadSileroModel().catch((err) => {
    shared = null;
    throw err;
  });
  return shared;
}

/** Loads a separate session; use sileroModel() unless you really want a second one. */
export async function loadSileroModel(path = sileroModelPath()): Promise<SileroModel> {
  // One thread and sequential execution: the worker runs many calls on few cores, and each
  // inference is ~0.3 ms, so intra-op parallelism would cost more in handoff than it saves.
  const session = await ort.InferenceSession.create(path, {
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: "sequential",
    graphOptimizationLevel: "all",
  });
  for (const name of ["input", "state", "sr"]) {
    if (!session.inputNames.includes(name)) {
      throw new Error(`${path}: not a Silero v5 model (no input "${name}")`);
    }
  }
  const sr = new ort.Tensor("int64", BigInt64Array.of(BigInt(SILERO_SAMPLE_RATE)), []);
  return { path, stream: () => new Stream(session, sr) };
}

class Stream implements SileroStream {
  readonly #session: ort.InferenceSession;
  readonly #sr: ort.Tensor;
  // [context | frame]; the context part is refilled from the frame's tail after each run.
  readonly #input = new Float32Array(SILERO_CONTEXT_SAMPLES + SILERO_FRAME_SAMPLES);
  readonly #inputTensor: ort.Tensor;
  #state: ort.Tensor;
  #busy = false;
  // Bumped by reset(), so a run that was in flight when reset() came cannot restore old state.
  #generation = 0;

  constructor(session: ort.InferenceSession, sr: ort.Tensor) {
    this.#session = session;
    this.#sr = sr;
    this.#inputTensor = new ort.Tensor("float32", this.#input, [1, this.#input.length]);
    this.#state = zeroState();
  }

  async probability(frame: Float32Array): Promise<number> {
    if (frame.length !== SILERO_FRAME_SAMPLES) {
      throw new RangeError(
        `Silero frame must be ${SILERO_FRAME_SAMPLES} samples, got ${frame.length}`,
      );
    }
    if (this.#busy) throw new Error("SileroStream.probability called while a frame is in flight");
    this.#busy = true;
    const generation = this.#generation;
    try {
      this.#input.set(frame, SILERO_CONTEXT_SAMPLES);
      const out = await this.#session.run({
        input: this.#inputTensor,
        state: this.#state,
        sr: this.#sr,
      });
      const p = out.output?.data[0];
      if (typeof p !== "number" || !out.stateN) throw new Error("Silero: unexpected outputs");
      if (generation === this.#generation) {
        this.#state = out.stateN;
        this.#input.copyWithin(0, SILERO_FRAME_SAMPLES);
      }
      return p;
    } finally {
      this.#busy = false;
    }
  }

  reset(): void {
    this.#generation++;
    this.#state = zeroState();
    this.#input.fill(0, 0, SILERO_CONTEXT_SAMPLES);
  }
}

function zeroState(): ort.Tensor {
  return new ort.Tensor("float32", new Float32Array(STATE_SIZE), [2, 1, 128]);
}
