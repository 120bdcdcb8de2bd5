// The local recognition engine: Debian's pocketsphinx 0.8+5prealpha with its en-us model (generic
// trigram LM, CMU dictionary), English only, in Worker threads (pocketsphinx_thread.ts).
//
// Threads: two by default (one on a single-core machine). A speaking caller costs ~0.1-0.15 of
// realtime (first utterances too, once the thread learnt a warm prior; ~0.25 while cold, with
// the second pass), so one thread keeps up with ~4-8 callers speaking at once; with 8 speaking at once a second thread cut the later
// utterances' finish latency p90 from 548 to 105 ms on this 2-core VM, and the main thread's
// 20 ms timer stayed within 5 ms either way (bench/media/stt.ts). Streams stay on the thread
// that opened them (their adaptation to the caller and the thread's decoders live there) and go
// to the thread with the fewest streams.
//
// Decoders: one per utterance in progress, not per call. A call needs a decoder only while its
// caller speaks (media/caller_audio/ pushes audio only from speech start to end of turn); it takes
// one from its thread's pool at the utterance's first audio and gives it back at finish(),
// keeping what its decoder learnt about the caller's channel (the live CMN state) to put into
// the next one. A decoder is ~47 MB: the decoders of a thread share one language model and use
// the dictionary cut to the LM's words (91 MB each without either). Each thread keeps
// `spareDecoders` initialised (ps_init ~0.3 s should not delay an utterance; re-made between
// messages after one was taken, once none of the thread's callers is mid-utterance) and keeps
// decoders given back up to `maxIdleDecoders`, freeing those beyond the spares once unused for
// `idleDecoderMs`.
//
// Audio is copied into 100 ms batches and each batch is transferred to the thread; interim
// hypotheses come back at most every `interimMs` of audio (default 300) and only when changed.
// A thread that crashes fails its streams (the router opens a fresh stream and replays the
// utterance) and is replaced by a new one, at most `MAX_RESTARTS` a minute
// (media/threads/restart_budget.ts), so the node keeps recognising for the calls after.
//
// Figures: bench/media/stt.ts; accuracy: media/stt/README.md.
import { NARROWBAND_SEED_PRIOR, SEED_PRIOR } from "./seed_prior.ts";
import { RestartBudget } from "../threads/restart_budget.ts";
import {
  type RecognitionEngine,
  RecognitionError,
  type RecognitionOpenOptions,
  type RecognitionResult,
  type RecognitionStream,
  UnservedLanguageError,
} from "./engine.ts";
import {
  type DecoderArgs,
  enUsArgs,
  enUsModelFiles,
  PocketsphinxMissingError,
} from "./pocketsphinx_ffi.ts";
import type { FromThread, ThreadSettings, ThreadStats, ToThread } from "./pocketsphinx_protocol.ts";

const RATE = 16000;
const BATCH_SAMPLES = RATE / 10;

/**
 * Decoder options over the en-us model's defaults, each chosen by interleaved A/B against the WER
 * tables (media/stt/README.md, bench/media/stt.ts --wer): at most 3000 active HMMs per frame
 * (x0.73 CPU), a narrower word-exit beam and a heavier phone-loop lookahead (together x0.75 more),
 * none at a measured WER cost.
 */
export const SPEED_ARGS: DecoderArgs = { maxhmmpf: "3000", wbeam: "1e-15", pl_weight: "4" };

/**
 * The LM's most probable words a decoder knows by default. The lexicon tree built from the
 * dictionary is most of a decoder and of its search: 20 k words make one 21 MB instead of 47 MB
 * (all 72.5 k) at ×0.75 the CPU, and WER on the test sets was equal or lower (media/stt/README.md).
 */
export const DEFAULT_VOCABULARY = 20_000;

export interface PocketsphinxOptions {
  /** Recognition threads; default 2 (1 on a single-core machine). */
  threads?: number;
  /** Initialised idle decoders each thread keeps ready for utterances; default 1. */
  spareDecoders?: number;
  /** Idle decoders a thread keeps at most (decoders given back beyond are freed); default spares + 3. */
  maxIdleDecoders?: number;
  /** Idle decoders beyond the spares are freed after this long unused; default 60 s. */
  idleDecoderMs?: number;
  /**
   * One decoder per call, held from its first utterance to close() (the former scheme, kept for
   * the benchmark's comparison); default false: a decoder per utterance.
   */
  decoderPerCall?: boolean;
  /**
   * The decoders of a thread search one shared language model (47 instead of 80 MB a decoder,
   * with the cut dictionary); default true.
   */
  shareLanguageModel?: boolean;
  /**
   * Decode with the CMU dictionary cut to the words the LM knows (79 k of 135 k entries; the
   * others can never be recognised): 11 MB less per decoder and a faster ps_init; default true.
   */
  lmWordsDictionary?: boolean;
  /**
   * With lmWordsDictionary, keep only the LM's this many most probable words (unigram
   * probability), plus `keepWords`; 0 keeps all 72.5 k. Default 20,000: a decoder is 21 instead
   * of 47 MB and searches ×0.75 the CPU, at equal or lower WER on our test sets (media/stt/README.md).
   */
  vocabulary?: number;
  /** Words the cut keeps whatever their rank (the turn lexicon's backchannels, e.g. "mhm"). */
  keepWords?: string[];
  /**
   * A call's first utterance is normalised by a cepstral-mean prior learnt from the thread's
   * earlier calls instead of the model's; default true.
   */
  warmPrior?: boolean;
  /**
   * With warmPrior, a fresh thread starts from the seed priors (media/stt/seed_prior.ts: one for
   * web calls, one for phone lines) instead of the model's, so the node's first callers' first
   * utterances need no second pass; default true for the en-us model (a decoderArgs `hmm` of
   * another model has no seed).
   */
  seedPrior?: boolean;
  /** Interim hypotheses at most once per this much audio; default 300 ms. */
  interimMs?: number;
  /**
   * A stream's first utterance up to this long, when it starts from the model's prior (no warm
   * prior learnt yet), gets a second, batch-normalised pass for its final text (more accurate,
   * costs ~0.1 of its length after it ends); 0 disables. Default 10 s.
   */
  firstUtteranceBatchMaxMs?: number;
  /** Decoder options over the en-us defaults (e.g. `{ beam: "1e-60" }`). */
  decoderArgs?: DecoderArgs;
}

export interface PocketsphinxStats {
  threads: number;
  streams: number;
  /** Decoders held now: by utterances in progress (by open calls with decoderPerCall). */
  decodersInUse: number;
  /** Initialised decoders waiting for an utterance. */
  idleDecoders: number;
  /** Decoders initialised since the threads started. */
  decodersMade: number;
  /** Utterances that found no spare decoder and waited for one to be initialised. */
  utterancesWaited: number;
}

interface Pending {
  resolve: (r: RecognitionResult) => void;
  reject: (e: Error) => void;
  audioMs: number;
}

/** Test hooks shared by an engine's streams. */
interface CrashHooks {
  /** Finishes still to crash their thread. */
  crashes: number;
}

interface Thread {
  worker: Worker;
  streams: Map<number, PocketsphinxStream>;
  opening: Map<number, { resolve: () => void; reject: (e: Error) => void }>;
  stats: Map<number, (s: ThreadStats) => void>;
  bye: (() => void) | null;
  dead: Error | null;
}

class PocketsphinxStream implements RecognitionStream {
  #listeners: ((text: string) => void)[] = [];
  #pending = new Map<number, Pending>();
  #utt = 0;
  #uttSamples = 0;
  #batch = new Int16Array(BATCH_SAMPLES);
  #fill = 0;
  #closed = false;

  constructor(private thread: Thread, readonly id: number, private hooks: CrashHooks) {}

  push(pcm16k: Int16Array): void {
    if (this.#closed) return;
    this.#uttSamples += pcm16k.length;
    let from = 0;
    while (from < pcm16k.length) {
      const n = Math.min(pcm16k.length - from, BATCH_SAMPLES - this.#fill);
      this.#batch.set(pcm16k.subarray(from, from + n), this.#fill);
      this.#fill += n;
      from += n;
      if (this.#fill === BATCH_SAMPLES) this.#flush();
    }
  }

  onInterim(cb: (text: string) => void): void {
    this.#listeners.push(cb);
  }

  finish(): Promise<RecognitionResult> {
    if (this.#closed) return Promise.reject(new RecognitionError("recognition stream is closed"));
    if (this.thread.dead) return Promise.reject(this.thread.dead);
    // No audio, no utterance: the thread is not asked and the numbering does not move.
    if (this.#uttSamples === 0) return Promise.resolve({ text: "", audioMs: 0 });
    const utt = this.#utt++;
    const audioMs = (this.#uttSamples * 1000) / RATE;
    this.#uttSamples = 0;
    this.#flush();
    return new Promise((resolve, reject) => {
      this.#pending.set(utt, { resolve, reject, audioMs });
      if (this.hooks.crashes > 0) {
        this.hooks.crashes--;
        send(this.thread, { type: "crash" });
      }
      send(this.thread, { type: "finish", id: this.id, utt });
    });
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.thread.streams.delete(this.id);
    send(this.thread, { type: "close", id: this.id });
    this.fail(new RecognitionError("recognition stream closed"));
  }

  /** From the thread. */
  receive(m: FromThread): void {
    if (m.type === "interim") {
      // Interims of an utterance already finished (or of an older one) are stale.
      if (m.utt === this.#utt) { for (const cb of this.#listeners) cb(m.text); }
    } else if (m.type === "final") {
      const p = this.#pending.get(m.utt);
      this.#pending.delete(m.utt);
      p?.resolve({ text: m.text, audioMs: p.audioMs });
    } else if (m.type === "error") {
      this.fail(new RecognitionError(`pocketsphinx: ${m.message}`));
    }
  }

  fail(err: Error): void {
    for (const p of this.#pending.values()) p.reject(err);
    this.#pending.clear();
  }

  #flush(): void {
    if (this.#fill === 0) return;
    const pcm = this.#fill === BATCH_SAMPLES ? this.#batch : this.#batch.slice(0, this.#fill);
    send(this.thread, { type: "audio", id: this.id, pcm }, [pcm.buffer]);
    if (pcm === this.#batch) this.#batch = new Int16Array(BATCH_SAMPLES);
    this.#fill = 0;
  }
}

function send(t: Thread, m: ToThread, transfer: Transferable[] = []): void {
  if (!t.dead) t.worker.postMessage(m, transfer);
}

/** The en-us model is the only one Debian packages (pocketsphinx-en-us). */
export const POCKETSPHINX_LANGUAGES: readonly string[] = ["LANGUAGE_EN"];

export class PocketsphinxEngine implements RecognitionEngine {
  readonly name = "pocketsphinx";
  readonly kind = "local";
  readonly languages = POCKETSPHINX_LANGUAGES;
  #threads: Thread[] = [];
  #nextId = 1;
  #closed = false;
  #settings?: ThreadSettings;
  #restarts = new RestartBudget();
  #hooks: CrashHooks = { crashes: 0 };
  /** Threads that crashed and were replaced since the engine started. */
  get restarted(): number {
    return this.#restarts.restarted;
  }

  private constructor() {}

  /**
   * Starts the threads and waits until each has its spare decoders initialised. Rejects with
   * PocketsphinxMissingError (naming the apt packages) when the libraries or model are missing.
   */
  static async create(options: PocketsphinxOptions = {}): Promise<PocketsphinxEngine> {
    const count = options.threads ?? Math.min(2, navigator.hardwareConcurrency || 1);
    if (!Number.isInteger(count) || count < 1) throw new RangeError("threads must be >= 1");
    const args = { ...enUsArgs(), ...SPEED_ARGS, ...options.decoderArgs };
    for (const f of enUsModelFiles()) {
      try {
        await Deno.stat(f);
      } catch {
        throw new PocketsphinxMissingError(`model file ${f} is missing`);
      }
    }
    const settings: ThreadSettings = {
      args,
      spares: options.spareDecoders ?? 1,
      maxIdle: options.maxIdleDecoders ?? (options.spareDecoders ?? 1) + 3,
      idleMs: options.idleDecoderMs ?? 60_000,
      decoderPerCall: options.decoderPerCall ?? false,
      shareLm: options.shareLanguageModel ?? true,
      lmWordsDictionary: options.lmWordsDictionary ?? true,
      vocabulary: options.vocabulary ?? DEFAULT_VOCABULARY,
      keepWords: options.keepWords ?? [],
      warmPrior: options.warmPrior ?? true,
      seedPriors: (options.seedPrior ?? true) && args.hmm === enUsArgs().hmm
        ? { wideband: SEED_PRIOR, narrowband: NARROWBAND_SEED_PRIOR }
        : undefined,
      interimMs: options.interimMs ?? 300,
      firstUtteranceBatchMaxMs: options.firstUtteranceBatchMaxMs ?? 10_000,
    };
    const engine = new PocketsphinxEngine();
    engine.#settings = settings;
    const started = await Promise.allSettled(
      Array.from({ length: count }, () => engine.#spawn(settings)),
    );
    const failed = started.find((r) => r.status === "rejected") as PromiseRejectedResult;
    if (failed) {
      await engine.close();
      throw failed.reason;
    }
    return engine;
  }

  /** A stream on the thread with the fewest; `channel` picks the prior its first utterance uses. */
  open(language: string, options: RecognitionOpenOptions = {}): Promise<RecognitionStream> {
    if (!this.languages.includes(language)) {
      return Promise.reject(new UnservedLanguageError(language, this.name, this.languages));
    }
    if (this.#closed) return Promise.reject(new RecognitionError("recognition engine closed"));
    const alive = this.#threads.filter((t) => !t.dead);
    if (!alive.length) return Promise.reject(new RecognitionError("no recognition thread alive"));
    const thread = alive.reduce((a, b) => (b.streams.size < a.streams.size ? b : a));
    const stream = new PocketsphinxStream(thread, this.#nextId++, this.#hooks);
    thread.streams.set(stream.id, stream);
    return new Promise((resolve, reject) => {
      thread.opening.set(stream.id, { resolve: () => resolve(stream), reject });
      send(thread, { type: "open", id: stream.id, channel: options.channel ?? "wideband" });
    });
  }

  /** Streams and decoders across the threads. */
  async stats(): Promise<PocketsphinxStats> {
    const alive = this.#threads.filter((t) => !t.dead);
    const per = await Promise.all(
      alive.map((t) =>
        new Promise<ThreadStats>((resolve) => {
          const req = this.#nextId++;
          t.stats.set(req, resolve);
          send(t, { type: "stats", req });
        })
      ),
    );
    return {
      threads: alive.length,
      streams: alive.reduce((n, t) => n + t.streams.size, 0),
      decodersInUse: per.reduce((n, s) => n + s.inUse, 0),
      idleDecoders: per.reduce((n, s) => n + s.idle, 0),
      decodersMade: per.reduce((n, s) => n + s.made, 0),
      utterancesWaited: per.reduce((n, s) => n + s.waited, 0),
    };
  }

  /** Frees every decoder, then ends the threads; open streams fail with RecognitionError. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const err = new RecognitionError("recognition engine closed");
    await Promise.all(this.#threads.map(async (t) => {
      this.#failStreams(t, err); // now, not after the thread's queued work
      if (!t.dead) {
        // Decoders are C memory of the process: free them before the thread goes.
        const bye = new Promise<void>((resolve) => (t.bye = resolve));
        send(t, { type: "shutdown" });
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([bye, new Promise((r) => (timer = setTimeout(r, 5000)))]);
        clearTimeout(timer);
      }
      this.#kill(t, err);
    }));
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /**
   * Test hook: the thread that gets each of the next `times` utterance ends crashes on it (an
   * uncaught exception in the thread), for real: its streams fail and a new thread replaces it.
   */
  crashThreadAtNextFinish(times = 1): void {
    this.#hooks.crashes += times;
  }

  /** A new thread for one that crashed, unless too many crashed in the last minute. */
  #replace(): void {
    const settings = this.#settings;
    if (this.#closed || !settings) return;
    this.#restarts.replace(() => this.#spawn(settings));
  }

  #spawn(settings: ThreadSettings): Promise<void> {
    const worker = new Worker(new URL("./pocketsphinx_thread.ts", import.meta.url), {
      type: "module",
    });
    const t: Thread = {
      worker,
      streams: new Map(),
      opening: new Map(),
      stats: new Map(),
      bye: null,
      dead: null,
    };
    this.#threads.push(t);
    return new Promise<void>((resolve, reject) => {
      worker.onmessage = (ev: MessageEvent<FromThread>) => {
        const m = ev.data;
        switch (m.type) {
          case "ready":
            return resolve();
          case "init_error": {
            const err = m.missing !== null
              ? new PocketsphinxMissingError(m.missing)
              : new RecognitionError(`pocketsphinx thread failed to start: ${m.message}`);
            this.#kill(t, err);
            return reject(err);
          }
          case "opened": {
            const o = t.opening.get(m.id);
            t.opening.delete(m.id);
            return o?.resolve();
          }
          case "stats": {
            const s = t.stats.get(m.req);
            t.stats.delete(m.req);
            return s?.(m);
          }
          case "bye":
            return t.bye?.();
          case "error": {
            const o = t.opening.get(m.id);
            if (o) {
              t.opening.delete(m.id);
              t.streams.delete(m.id);
              return o.reject(new RecognitionError(`pocketsphinx: ${m.message}`));
            }
            return t.streams.get(m.id)?.receive(m);
          }
          default:
            return t.streams.get(m.id)?.receive(m);
        }
      };
      worker.onerror = (ev: ErrorEvent) => {
        ev.preventDefault(); // a dead thread fails its own streams, not the whole process
        const err = new RecognitionError(`pocketsphinx thread crashed: ${ev.message}`);
        const wasAlive = !t.dead;
        this.#kill(t, err);
        reject(err);
        if (wasAlive) this.#replace();
      };
      send(t, { type: "init", settings });
    });
  }

  #kill(t: Thread, err: Error): void {
    if (t.dead) return;
    t.dead = err;
    t.worker.terminate();
    if (!this.#closed) this.#threads = this.#threads.filter((x) => x !== t);
    this.#failStreams(t, err);
    for (const s of t.stats.values()) s({ idle: 0, inUse: 0, made: 0, waited: 0, calls: 0 });
    t.stats.clear();
    t.bye?.();
  }

  #failStreams(t: Thread, err: Error): void {
    for (const o of t.opening.values()) o.reject(err);
    t.opening.clear();
    for (const s of t.streams.values()) s.fail(err);
    t.streams.clear();
  }
}
