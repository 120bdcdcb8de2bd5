// The recognition thread: pocketsphinx decoders live here, because every FFI call blocks and
// decoding costs ~0.1 of realtime per speaking caller, which the media worker's event loop,
// pacing 20 ms frames for every call, cannot spare. Messages are handled in order, so a
// stream's audio, finish and close keep their order.
/// <reference lib="deno.worker" />
import { checkInstalled, PocketsphinxMissingError } from "./pocketsphinx_ffi.ts";
import { nameThisThread } from "../../common/thread_name.ts";
import { niceThisThread } from "../../common/thread_priority.ts";
import { CallRecogniser, DecoderPool } from "./pocketsphinx_decoding.ts";
import { lmWordsDictionary } from "./lm_dictionary.ts";
import type { FromThread, ThreadSettings, ToThread } from "./pocketsphinx_protocol.ts";

let settings: ThreadSettings;
let pool: DecoderPool;
const calls = new Map<number, { rec: CallRecogniser; utt: number }>();
let refillScheduled = false;
/** Idle decoders beyond the spares are freed once unused for the pool's idleMs. */
let trimTimer: ReturnType<typeof setInterval> | undefined;
// `top -H` and the benchmarks tell recognition threads apart from the rest of the worker.
nameThisThread("recognition");
// On a busy core the media thread's frames go first; this thread's work can wait a little.
niceThisThread();
let shutDown = false;

function post(m: FromThread, transfer: Transferable[] = []) {
  self.postMessage(m, transfer);
}

/** Whether any call of this thread is mid-utterance (its audio is arriving now). */
function someoneSpeaks(): boolean {
  for (const c of calls.values()) if (c.rec.decoder?.inUtterance) return true;
  return false;
}

/**
 * Spares are initialised one per task, between messages, and only while none of this thread's
 * callers is mid-utterance: ps_init holds the thread for 0.3-0.6 s, and audio queued behind it
 * delays those callers' final text (media/stt/README.md). A speaker who finds no spare
 * initialises one at its start, as it would have waited anyway. Every utterance that took a
 * spare ends in a finish or a close, and both look again.
 */
function scheduleRefill() {
  if (refillScheduled || !pool.short || someoneSpeaks()) return;
  refillScheduled = true;
  setTimeout(() => {
    refillScheduled = false;
    if (shutDown || someoneSpeaks()) return;
    pool.fillOne();
    scheduleRefill();
  }, 0);
}

/** The decoders' dictionary: cut to the LM's words unless told otherwise or it cannot be made. */
function dictionaryFor(s: ThreadSettings): ThreadSettings["args"] {
  const { dict, lm } = s.args;
  if (!s.lmWordsDictionary || !dict || !lm) return s.args;
  try {
    const cut = { vocabulary: s.vocabulary, keep: s.keepWords };
    return { ...s.args, dict: lmWordsDictionary(dict, lm, undefined, cut) };
  } catch {
    return s.args; // e.g. no writable cache directory: the full dictionary works, only larger
  }
}

function handle(m: ToThread) {
  switch (m.type) {
    case "init": {
      const t0 = performance.now();
      try {
        settings = m.settings;
        checkInstalled();
        settings.args = dictionaryFor(settings);
        pool = new DecoderPool(settings.args, settings);
        while (pool.fillOne());
        trimTimer = setInterval(() => pool.trim(), Math.max(1000, pool.idleMs / 4));
        post({ type: "ready", initMs: performance.now() - t0 });
      } catch (err) {
        const missing = err instanceof PocketsphinxMissingError ? err.what : null;
        post({ type: "init_error", message: (err as Error).message, missing });
      }
      return;
    }
    case "open": {
      // No decoder yet: the call takes one when its caller starts speaking.
      calls.set(m.id, { rec: new CallRecogniser(pool, settings, m.channel), utt: 0 });
      post({ type: "opened", id: m.id, initMs: 0 });
      return;
    }
    case "audio": {
      const c = calls.get(m.id);
      if (!c) return;
      const text = c.rec.push(m.pcm);
      if (text !== null) post({ type: "interim", id: m.id, utt: c.utt, text });
      return;
    }
    case "finish": {
      const c = calls.get(m.id);
      if (!c) return;
      const t0 = performance.now();
      const text = c.rec.finish();
      post({ type: "final", id: m.id, utt: m.utt, text, decodeMs: performance.now() - t0 });
      c.utt = m.utt + 1;
      scheduleRefill(); // the spare this utterance may have taken
      return;
    }
    case "close": {
      const c = calls.get(m.id);
      if (!c) return;
      calls.delete(m.id);
      c.rec.close();
      scheduleRefill(); // a call hung up mid-utterance ends it here
      return;
    }
    case "stats":
      post({
        type: "stats",
        req: m.req,
        idle: pool?.idle ?? 0,
        inUse: pool?.inUse ?? 0,
        made: pool?.made ?? 0,
        waited: pool?.waited ?? 0,
        calls: calls.size,
      });
      return;
    case "shutdown": {
      shutDown = true;
      clearInterval(trimTimer);
      for (const c of calls.values()) c.rec.close();
      calls.clear();
      pool?.close();
      post({ type: "bye" });
      return;
    }
  }
}

self.onmessage = (ev: MessageEvent<ToThread>) => {
  const m = ev.data;
  // Outside the try: an uncaught exception, which ends the thread like a real crash would.
  if (m.type === "crash") throw new Error("pocketsphinx thread crashed (test hook)");
  try {
    handle(m);
  } catch (err) {
    // A failing stream reports its own error; the thread goes on serving the others.
    const id = "id" in m ? m.id : -1;
    post({ type: "error", id, message: (err as Error).message });
  }
};
