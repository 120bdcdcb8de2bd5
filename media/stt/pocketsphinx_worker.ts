// The recognition thread: pocketsphinx decoders live here, because every FFI call blocks and
// decoding costs a good part of realtime, which the media worker's event loop cannot spare.
// One decoder per open stream; a spare is kept initialised so a new call does not wait the
// ~0.7 s ps_init takes.
/// <reference lib="deno.worker" />
import { checkInstalled, enUsArgs, PsDecoder } from "./pocketsphinx_ffi.ts";
import type { ToRecogniser } from "./pocketsphinx_protocol.ts";

const INTERIM_EVERY_SAMPLES = 16000 * 0.3;
const decoders = new Map<number, { ps: PsDecoder; sinceInterim: number }>();
let spare: PsDecoder | undefined;

function post(m: unknown) {
  self.postMessage(m);
}

function newDecoder(): PsDecoder {
  return new PsDecoder(enUsArgs());
}

function take(): PsDecoder {
  const ps = spare ?? newDecoder();
  spare = undefined;
  return ps;
}

self.onmessage = (ev: MessageEvent<ToRecogniser>) => {
  const m = ev.data;
  try {
    switch (m.op) {
      case "open": {
        decoders.set(m.id, { ps: take(), sinceInterim: 0 });
        post({ op: "opened", id: m.id });
        // Refill the spare after answering, so this call did not wait for it.
        queueMicrotask(() => (spare ??= newDecoder()));
        break;
      }
      case "push": {
        const d = decoders.get(m.id);
        if (!d) return;
        if (!d.ps.inUtterance) d.ps.start();
        d.ps.process(m.pcm);
        d.sinceInterim += m.pcm.length;
        if (d.sinceInterim >= INTERIM_EVERY_SAMPLES) {
          d.sinceInterim = 0;
          post({ op: "interim", id: m.id, text: d.ps.hyp() });
        }
        break;
      }
      case "finish": {
        const d = decoders.get(m.id);
        let text = "";
        if (d?.ps.inUtterance) {
          d.ps.end();
          text = d.ps.hyp();
          d.sinceInterim = 0;
        }
        post({ op: "final", id: m.id, seq: m.seq, text });
        break;
      }
      case "close": {
        const d = decoders.get(m.id);
        decoders.delete(m.id);
        if (!d) return;
        d.ps.end();
        if (!spare) spare = d.ps; // a used decoder is as good as new for the next call
        else d.ps.free();
        break;
      }
      case "start": {
        checkInstalled();
        spare = newDecoder();
        post({ op: "ready" });
        break;
      }
    }
  } catch (err) {
    post({ op: "error", id: "id" in m ? m.id : undefined, message: (err as Error).message });
  }
};
