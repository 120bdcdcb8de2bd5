// Measures the two WASM Opus builds this project can use, to choose one for wasm/opus.ts.
// Run: deno run -A bench/media/opus_choice.ts [frames]
//
// Both are measured through their public APIs (which allocate a result per frame) and through
// their low-level entry points writing into reused buffers (what a hot path would do).
// Work per call per 20 ms: one encode at 48 kHz mono (bot audio out) and one decode at 16 kHz
// mono (caller audio in, straight to the recogniser's rate).

import { createRequire } from "node:module";
import { Decoder as EvanDecoder, Encoder as EvanEncoder } from "@evan/opus/wasm/index.mjs";
import OpusScript from "opusscript";
import { speechLikeFrames } from "./host_speed.ts";
import { median } from "../harness/stats.ts";

const FRAMES = Number(Deno.args[0] ?? 1500);
const ROUNDS = 3;
const FRAME_48K = 960;

interface Codec {
  name: string;
  encode(pcm: Int16Array): Uint8Array;
  decode16(pkt: Uint8Array): number;
  decode48(pkt: Uint8Array): number;
}

function evanPublic(): Codec {
  const enc = new EvanEncoder({ channels: 1, sample_rate: 48000, application: "voip" });
  const d16 = new EvanDecoder({ channels: 1, sample_rate: 16000 });
  const d48 = new EvanDecoder({ channels: 1, sample_rate: 48000 });
  return {
    name: "@evan/opus wasm, public API",
    encode: (pcm) => enc.encode(pcm),
    decode16: (p) => d16.decode(p).length / 2,
    decode48: (p) => d48.decode(p).length / 2,
  };
}

function opusscriptPublic(): Codec {
  const e48 = new OpusScript(48000, 1, OpusScript.Application.VOIP, { wasm: true });
  const d16 = new OpusScript(16000, 1, OpusScript.Application.VOIP, { wasm: true });
  return {
    name: "opusscript wasm, public API",
    encode: (pcm) => e48.encode(pcm as unknown as Buffer, FRAME_48K),
    decode16: (p) => d16.decode(p as unknown as Buffer).length / 2,
    decode48: (p) => e48.decode(p as unknown as Buffer).length / 2,
  };
}

/** @evan/opus's WASM module instantiated directly: raw libopus C API, reused buffers. */
function evanRaw(): Codec {
  const require = createRequire(import.meta.url);
  const dir = require.resolve("@evan/opus/wasm/index.js").replace(/index\.js$/, "");
  const mod = new WebAssembly.Module(Deno.readFileSync(dir + "simd.wasm"));
  const noop = () => 0;
  const inst = new WebAssembly.Instance(mod, {
    wasi_snapshot_preview1: { fd_seek: noop, fd_write: noop, fd_close: noop, proc_exit: noop },
    env: { emscripten_notify_memory_growth: noop },
  });
  // deno-lint-ignore no-explicit-any
  const w = inst.exports as any;
  const mk = (rate: number) => {
    const p = w.malloc(w.opus_decoder_get_size(1));
    w.opus_decoder_init(p, rate, 1);
    return p;
  };
  const enc = w.malloc(w.opus_encoder_get_size(1));
  w.opus_encoder_init(enc, 48000, 1, 2048);
  const d16 = mk(16000), d48 = mk(48000);
  const pcmPtr = w.malloc(5760 * 2), pktPtr = w.malloc(4000);
  const mem = () => w.memory.buffer as ArrayBuffer;
  const out = new Uint8Array(4000);
  return {
    name: "@evan/opus wasm, raw exports",
    encode(pcm) {
      new Int16Array(mem(), pcmPtr, FRAME_48K).set(pcm);
      const n = w.opus_encode(enc, pcmPtr, FRAME_48K, pktPtr, 4000);
      out.set(new Uint8Array(mem(), pktPtr, n));
      return out.subarray(0, n);
    },
    decode16(p) {
      new Uint8Array(mem(), pktPtr, p.length).set(p);
      return w.opus_decode(d16, pktPtr, p.length, pcmPtr, 320, 0);
    },
    decode48(p) {
      new Uint8Array(mem(), pktPtr, p.length).set(p);
      return w.opus_decode(d48, pktPtr, p.length, pcmPtr, 960, 0);
    },
  };
}

/** opusscript's embind handler called with its own heap buffers (no Buffer.from per frame). */
function opusscriptRaw(): Codec {
  type OS = {
    handler: {
      _encode(i: number, n: number, o: number, fs: number): number;
      _decode(i: number, n: number, o: number): number;
    };
    inPCM: Uint16Array;
    inPCMPointer: number;
    inOpus: Uint8Array;
    inOpusPointer: number;
    outOpus: Uint8Array;
    outOpusPointer: number;
    outPCMPointer: number;
  };
  const e48 = new OpusScript(48000, 1, OpusScript.Application.VOIP, {
    wasm: true,
  }) as unknown as OS;
  const d16 = new OpusScript(16000, 1, OpusScript.Application.VOIP, {
    wasm: true,
  }) as unknown as OS;
  const out = new Uint8Array(4000);
  const dec = (o: OS, p: Uint8Array) => {
    o.inOpus.set(p);
    return o.handler._decode(o.inOpusPointer, p.length, o.outPCMPointer);
  };
  return {
    name: "opusscript wasm, handler + heap views",
    encode(pcm) {
      e48.inPCM.set(pcm);
      const n = e48.handler._encode(e48.inPCMPointer, pcm.length, e48.outOpusPointer, FRAME_48K);
      out.set(e48.outOpus.subarray(0, n));
      return out.subarray(0, n);
    },
    decode16: (p) => dec(d16, p),
    decode48: (p) => dec(e48, p),
  };
}

const signal = speechLikeFrames(FRAMES, { noise: 0.03, amplitude: 32767 * 0.8 });
console.log(
  `frames per round: ${FRAMES} (${(FRAMES * 0.02).toFixed(0)} s of audio), rounds: ${ROUNDS}`,
);
console.log("per frame (20 ms): median over rounds of mean time; x realtime = 20 ms / time");
for (
  const make
    of (Deno.args[1] === "rev"
      ? [opusscriptRaw, evanRaw, opusscriptPublic, evanPublic]
      : [evanPublic, opusscriptPublic, evanRaw, opusscriptRaw])
) {
  const c = make();
  const encT: number[] = [], d16T: number[] = [], d48T: number[] = [];
  let bytes = 0, samples16 = 0;
  for (let r = 0; r < ROUNDS + 1; r++) {
    const pkts: Uint8Array[] = [];
    let t0 = performance.now();
    for (const f of signal) pkts.push(c.encode(f).slice());
    const te = performance.now() - t0;
    t0 = performance.now();
    let n16 = 0;
    for (const p of pkts) n16 += c.decode16(p);
    const td16 = performance.now() - t0;
    t0 = performance.now();
    for (const p of pkts) c.decode48(p);
    const td48 = performance.now() - t0;
    if (r === 0) continue; // warm-up round (JIT, WASM tier-up)
    encT.push(te / FRAMES);
    d16T.push(td16 / FRAMES);
    d48T.push(td48 / FRAMES);
    bytes = pkts.reduce((a, p) => a + p.length, 0) / FRAMES;
    samples16 = n16 / FRAMES;
  }
  const e = median(encT), d = median(d16T), d4 = median(d48T);
  console.log(
    `${c.name.padEnd(40)} encode48k ${e.toFixed(3)} ms (${(20 / e).toFixed(0)}x)  ` +
      `decode16k ${d.toFixed(3)} ms (${(20 / d).toFixed(0)}x)  decode48k ${d4.toFixed(3)} ms  ` +
      `enc+dec16k ${(e + d).toFixed(3)} ms  ${
        bytes.toFixed(0)
      } B/pkt  ${samples16} samples/16k-frame`,
  );
}
