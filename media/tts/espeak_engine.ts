// The local synthesis engine: espeak-ng (emscripten's wasm2js build) in Worker threads, resampled to 48 kHz there.
//
// Threads: one per engine by default, and one engine per process. Measured (bench/media/tts.ts,
// this 2-core VM): a warm thread makes a 12 s unit in ~55 ms and a 2 s one in ~10-20 ms
// (realtime factor ~0.005), with its first chunk ~1 ms after the request; each thread costs
// ~85 MB resident (its own V8 isolate and a copy of espeak's 24 MB data). Units queue FIFO for
// the first free thread, so a unit started behind others waits for them: 4 long units at once
// got their first chunk after 1 / 57 / 110 / 164 ms on one thread, and 11 / 4 / 159 / 180 ms on
// two (two threads running at once were each ~3x slower here, the cores being shared), so a
// second thread bought nothing but memory on this machine. `threads` is there for bigger ones.
//
// A thread that crashes fails the unit it was making (the router gives a unit that had no audio
// yet a second try) and is replaced by a new one, at most `MAX_RESTARTS` a minute
// (media/threads/restart_budget.ts); units queued meanwhile wait for it.
//
// Voices are espeak variants on the language's own voice: Ananya "+f3" (female, median F0
// ~200 Hz), Arjun "+m3" (male, ~100 Hz). The seven roster languages espeak-ng has no data for
// are spoken by a related language's voice (related_voice.ts), their text transliterated first
// where the script differs, and their word timings put back on the text the caller sent.

import {
  type SynthesisCatalog,
  type SynthesisChunk,
  type SynthesisEngine,
  SynthesisError,
  type SynthesisOptions,
  UnservedError,
} from "./engine.ts";
import type { FromThread, ToThread } from "./espeak_protocol.ts";
import { RestartBudget } from "../threads/restart_budget.ts";
import { forRelatedVoice, RELATED_VOICES } from "./related_voice.ts";
import { onOriginal, type Transliteration } from "./transliteration/transliteration.ts";

/** Persona → espeak variant suffix. */
export const ESPEAK_VOICES: Readonly<Record<string, string>> = {
  VOICE_ANANYA: "+f3",
  VOICE_ARJUN: "+m3",
};

/** Language → espeak voice; the Indic languages espeak-ng's data has (stack-notes §6). */
export const ESPEAK_LANGUAGES: Readonly<Record<string, string>> = {
  LANGUAGE_EN: "en-us",
  LANGUAGE_AS: "as",
  LANGUAGE_BN: "bn",
  LANGUAGE_GU: "gu",
  LANGUAGE_HI: "hi",
  LANGUAGE_KN: "kn",
  LANGUAGE_KOK: "kok",
  LANGUAGE_ML: "ml",
  LANGUAGE_MR: "mr",
  LANGUAGE_NE: "ne",
  LANGUAGE_OR: "or",
  LANGUAGE_PA: "pa",
  LANGUAGE_SD: "sd",
  LANGUAGE_TA: "ta",
  LANGUAGE_TE: "te",
  LANGUAGE_UR: "ur",
};

export interface EspeakEngineOptions {
  /** Worker threads running espeak; default 1. */
  threads?: number;
  /** Speex quality (0-10) of the 22.05 → 48 kHz resampling; default 5. */
  quality?: number;
}

interface Job {
  id: number;
  text: string;
  /** Set when `text` is a transliteration: word timings go back onto `original`. */
  original?: { text: string; map: Transliteration };
  voice: string;
  items: SynthesisChunk[];
  /** Set once the stream is over; `error` is what the consumer gets thrown. */
  end: { error?: unknown } | null;
  wake: (() => void) | null;
  thread: Thread | null;
}

interface Thread {
  worker: Worker;
  cancel: Int32Array;
  job: Job | null;
  ready: boolean;
  dead: boolean;
}

/** Language → the espeak voice that speaks it: its own, or a related language's. */
const SPOKEN_BY: Readonly<Record<string, string>> = {
  ...ESPEAK_LANGUAGES,
  ...Object.fromEntries(
    Object.entries(RELATED_VOICES).map(([l, r]) => [l, ESPEAK_LANGUAGES[r.via]]),
  ),
};

/** Language → the language whose voice speaks it, for those without a voice of their own. */
export const ESPEAK_RELATED: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(RELATED_VOICES).map(([l, r]) => [l, r.via]),
);

/** Every language in both personas: the speaking voice with the persona's variant. */
export const ESPEAK_CATALOG: SynthesisCatalog = Object.fromEntries(
  Object.entries(SPOKEN_BY).map(([language, voice]) => [
    language,
    Object.fromEntries(Object.entries(ESPEAK_VOICES).map(([p, variant]) => [p, voice + variant])),
  ]),
);

export class EspeakEngine implements SynthesisEngine {
  readonly name = "espeak-ng";
  readonly kind = "local";
  readonly catalog = ESPEAK_CATALOG;
  readonly related = ESPEAK_RELATED;
  readonly voices: readonly string[] = Object.keys(ESPEAK_VOICES);
  readonly languages: readonly string[] = Object.keys(SPOKEN_BY);
  readonly streaming = true;
  /** espeak-ng speaks at 22,050 Hz; the thread resamples to 48 kHz. */
  readonly sampleRate = 22_050;
  readonly wordTimings = "engine";
  /** Resolves once every thread has loaded espeak and warmed up; rejects if one failed. */
  readonly ready: Promise<void>;
  #threads: Thread[] = [];
  #queue: Job[] = [];
  #nextId = 1;
  #closed = false;
  #failReady: ((err: Error) => void)[] = [];
  #quality: number;
  #restarts = new RestartBudget();
  /** Test hook: the next job crashes its thread after this many chunks. */
  #crashAfter?: number;
  /** Threads that crashed and were replaced since the engine started. */
  get restarted(): number {
    return this.#restarts.restarted;
  }

  constructor(options: EspeakEngineOptions = {}) {
    const count = options.threads ?? 1;
    if (!Number.isInteger(count) || count < 1) throw new RangeError("threads must be >= 1");
    this.#quality = options.quality ?? 5;
    const readies: Promise<void>[] = [];
    for (let i = 0; i < count; i++) {
      readies.push(this.#spawn(this.#quality));
    }
    this.ready = Promise.all(readies).then(() => {});
    this.ready.catch(() => {}); // reported to whoever awaits it; never an unhandled rejection
  }

  synthesize(text: string, options: SynthesisOptions): AsyncIterable<SynthesisChunk> {
    if (!Object.hasOwn(ESPEAK_VOICES, options.voice)) {
      throw new UnservedError("voice", options.voice, this.name, this.voices);
    }
    if (!Object.hasOwn(SPOKEN_BY, options.language)) {
      throw new UnservedError("language", options.language, this.name, this.languages);
    }
    if (this.#closed) throw new SynthesisError("engine closed");
    if (this.#threads.every((t) => t.dead)) throw new SynthesisError("no espeak thread is alive");
    const variant = ESPEAK_VOICES[options.voice], lang = SPOKEN_BY[options.language];
    let original: Job["original"];
    if (Object.hasOwn(RELATED_VOICES, options.language)) {
      const map = forRelatedVoice(options.language, text); // may refuse the script
      if (map.text !== text) original = { text, map };
    }
    const job: Job = {
      id: this.#nextId++,
      text: original?.map.text ?? text,
      original,
      voice: lang + variant,
      items: [],
      end: null,
      wake: null,
      thread: null,
    };
    const signal = options.signal;
    const onAbort = () => this.#stop(job, signal!.reason);
    if (signal?.aborted) job.end = { error: signal.reason };
    else if (!/\S/.test(text)) job.end = {}; // espeak would give ~15 ms of silence
    else {
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#queue.push(job);
      this.#dispatch();
    }
    let taken = false;
    const leave = () => {
      signal?.removeEventListener("abort", onAbort);
      this.#stop(job); // the consumer left early: stop the work too
    };
    return {
      [Symbol.asyncIterator]() {
        if (taken) throw new Error("a synthesis stream can be iterated once");
        taken = true;
        return (async function* () {
          try {
            while (true) {
              if (job.items.length) yield job.items.shift()!;
              else if (job.end) {
                if (job.end.error !== undefined) throw job.end.error;
                return;
              } else await new Promise<void>((resolve) => job.wake = resolve);
            }
          } finally {
            leave();
          }
        })();
      },
    };
  }

  /** Terminates the threads; open streams fail with SynthesisError("engine closed"). */
  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    const err = new SynthesisError("engine closed");
    for (const fail of this.#failReady) fail(err);
    for (const t of this.#threads) {
      t.worker.terminate();
      t.dead = true;
      if (t.job) this.#end(t.job, err);
      t.job = null;
    }
    for (const job of this.#queue.splice(0)) this.#end(job, err);
    return Promise.resolve();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /**
   * Test hook: the thread that takes the next unit crashes (an uncaught exception in the thread)
   * after sending `afterChunks` chunks of it (0: before any), for real: the unit fails and a new
   * thread replaces the dead one.
   */
  crashThreadAtNextUnit(afterChunks = 0): void {
    this.#crashAfter = afterChunks;
  }

  /** A new thread for one that crashed, unless too many crashed in the last minute. */
  #replace(): void {
    if (this.#closed) return;
    this.#restarts.replace(() => this.#spawn(this.#quality));
  }

  #spawn(quality: number): Promise<void> {
    const worker = new Worker(new URL("./espeak_thread.ts", import.meta.url), { type: "module" });
    const cancel = new SharedArrayBuffer(4);
    const t: Thread = {
      worker,
      cancel: new Int32Array(cancel),
      job: null,
      ready: false,
      dead: false,
    };
    this.#threads.push(t);
    const ready = new Promise<void>((resolve, reject) => {
      this.#failReady.push(reject);
      worker.onmessage = (ev: MessageEvent<FromThread>) => {
        const msg = ev.data;
        if (msg.type === "ready") {
          t.ready = true;
          resolve();
          this.#dispatch();
        } else if (msg.type === "init_error") {
          this.#kill(t, new SynthesisError(`espeak thread failed to start: ${msg.message}`));
          reject(new SynthesisError(`espeak thread failed to start: ${msg.message}`));
        } else this.#onJobMessage(t, msg);
      };
      worker.onerror = (ev: ErrorEvent) => {
        ev.preventDefault(); // a dead thread fails its own work, not the whole process
        const err = new SynthesisError(`espeak thread crashed: ${ev.message}`);
        const wasAlive = !t.dead;
        if (wasAlive && !this.#closed) this.#replace(); // before #kill: queued units wait for it
        this.#kill(t, err);
        reject(err);
      };
    });
    const init: ToThread = {
      type: "init",
      cancel,
      quality,
      warm: Object.values(ESPEAK_VOICES).map((v) => ESPEAK_LANGUAGES.LANGUAGE_EN + v),
    };
    worker.postMessage(init);
    return ready;
  }

  #onJobMessage(t: Thread, msg: FromThread) {
    const job = t.job;
    if (!job || !("id" in msg) || msg.id !== job.id) return;
    if (msg.type === "chunk") {
      if (!job.end) {
        const o = job.original;
        const words = o ? msg.words.map((w) => onOriginal(o.map, o.text, w)) : msg.words;
        job.items.push({ pcm: msg.pcm, words });
        this.#wake(job);
      }
    } else if (msg.type === "done" || msg.type === "error") {
      t.job = null;
      job.thread = null;
      if (msg.type === "error") this.#end(job, new SynthesisError(msg.message));
      else this.#end(job);
      this.#dispatch();
    }
  }

  #dispatch() {
    for (const t of this.#threads) {
      if (!t.ready || t.dead || t.job) continue;
      const job = this.#queue.shift();
      if (!job) return;
      t.job = job;
      job.thread = t;
      if (this.#crashAfter !== undefined) {
        const crash: ToThread = { type: "crash", afterChunks: this.#crashAfter };
        t.worker.postMessage(crash);
        this.#crashAfter = undefined;
      }
      const msg: ToThread = { type: "synth", id: job.id, text: job.text, voice: job.voice };
      t.worker.postMessage(msg);
    }
  }

  /** Ends a job early: out of the queue, or flagged to its thread (which then reports done). */
  #stop(job: Job, reason?: unknown) {
    if (job.end) return;
    const queued = this.#queue.indexOf(job);
    if (queued >= 0) this.#queue.splice(queued, 1);
    if (job.thread) Atomics.store(job.thread.cancel, 0, job.id);
    job.items.length = 0;
    this.#end(job, reason);
  }

  #end(job: Job, error?: unknown) {
    job.end ??= error === undefined ? {} : { error };
    this.#wake(job);
  }

  #wake(job: Job) {
    const wake = job.wake;
    job.wake = null;
    wake?.();
  }

  #kill(t: Thread, err: Error) {
    t.dead = true;
    t.worker.terminate();
    if (!this.#closed) this.#threads = this.#threads.filter((x) => x !== t);
    if (t.job) this.#end(t.job, err);
    t.job = null;
    // With no thread left, queued units would wait forever.
    if (this.#threads.every((x) => x.dead)) {
      for (const job of this.#queue.splice(0)) this.#end(job, err);
    }
  }
}
