/// <reference lib="deno.worker" />
// The Worker thread behind EspeakEngine: espeak + resampling off the media worker's event loop.
// It runs one job at a time (the engine queues); each espeak callback (~100 ms of audio) is
// resampled to 48 kHz and posted at once, so the first audio leaves long before the unit ends.
// A job is cancelled through a shared Int32: the engine stores the job id in it and the next
// espeak callback stops synthesis (espeak's loop is synchronous, so messages cannot reach it).

// espeak and the resampler are imported dynamically, at init: resampler.ts has a top-level
// await, and a message that arrives while the module graph is still evaluating (before
// `self.onmessage` is set) would be lost.
import type { Espeak } from "../../wasm/espeak.ts";
import type { Resampler } from "../../wasm/resampler.ts";
import { WordAligner } from "./word_timing.ts";
import { nameThisThread } from "../../common/thread_name.ts";
import { niceThisThread } from "../../common/thread_priority.ts";
import { type FromThread, OUTPUT_RATE, type ToThread } from "./espeak_protocol.ts";

let espeak: Espeak;
let resampler: Resampler;
let cancel: Int32Array;
/** Test hook: chunks the next job posts before the thread crashes (undefined: no crash). */
let crashAfter: number | undefined;

// `top -H` and the benchmarks tell synthesis threads apart from the rest of the worker.
nameThisThread("synthesis");
// On a busy core the media thread's frames go first; this thread's work can wait a little.
niceThisThread();

/** What the test hook throws: it must escape every catch here, as a real crash would. */
class ThreadCrash extends Error {}

function crashIfArmed(chunks: number) {
  if (crashAfter === undefined || chunks < crashAfter) return;
  crashAfter = undefined;
  throw new ThreadCrash("espeak thread crashed (test hook)");
}

const post = (msg: FromThread, transfer: Transferable[] = []) => self.postMessage(msg, transfer);

function run(id: number, text: string, voice: string) {
  const t0 = performance.now();
  if (Atomics.load(cancel, 0) === id) return post({ type: "done", id, stopped: true, ms: 0 });
  espeak.setVoice(voice);
  const aligner = new WordAligner(text);
  let chunks = 0;
  crashIfArmed(chunks);
  const { samples, stopped } = espeak.synthesize(text, (pcm, events) => {
    if (Atomics.load(cancel, 0) === id) return true;
    const out = resampler.process(pcm);
    const words = aligner.push(events);
    if (out.length || words.length) {
      post({ type: "chunk", id, pcm: out, words }, [out.buffer]);
      crashIfArmed(++chunks);
    }
    return Atomics.load(cancel, 0) === id;
  });
  if (stopped) {
    resampler.reset();
  } else {
    const tail = resampler.flush();
    const words = aligner.finish(samples * 1000 / espeak.sampleRate);
    if (tail.length || words.length) post({ type: "chunk", id, pcm: tail, words }, [tail.buffer]);
  }
  post({ type: "done", id, stopped, ms: performance.now() - t0 });
}

async function init(msg: Extract<ToThread, { type: "init" }>) {
  const t0 = performance.now();
  try {
    cancel = new Int32Array(msg.cancel);
    const [{ Espeak }, { Resampler }] = await Promise.all([
      import("../../wasm/espeak.ts"),
      import("../../wasm/resampler.ts"),
    ]);
    espeak = await Espeak.load();
    resampler = new Resampler(espeak.sampleRate, OUTPUT_RATE, { quality: msg.quality });
    // A full synthesis per warm voice, so the first real unit does not pay for cold JIT.
    // (Switching voice later costs 0.1-7 ms, so other languages are not preloaded.)
    for (const v of msg.warm) {
      espeak.setVoice(v);
      espeak.synthesize("Hello, this is a warm up.", (pcm) => void resampler.process(pcm));
      resampler.reset();
    }
    post({ type: "ready", ms: performance.now() - t0 });
  } catch (err) {
    post({ type: "init_error", message: String(err) });
  }
}

// Synchronous for jobs: an exception that escapes is uncaught, and ends the thread.
self.onmessage = (ev: MessageEvent<ToThread>) => {
  const msg = ev.data;
  if (msg.type === "init") return void init(msg);
  if (msg.type === "crash") return void (crashAfter = msg.afterChunks);
  try {
    run(msg.id, msg.text, msg.voice);
  } catch (err) {
    if (err instanceof ThreadCrash) throw err;
    resampler.reset();
    post({ type: "error", id: msg.id, message: String(err) });
  }
};
