// Whether one part of a call leaves anonymous memory behind outside the C heap (V8's heaps, WASM
// memories, stacks: `anon other` in mappings.ts), the part of a worker's RSS that rose ~0.5 MB a
// minute in the 30-minute soak (bench/media/README.md, "soak.ts"). Runs one part alone, call after
// call, in this process, and reads the mappings after a full GC every 25 calls: a part that grows
// per call shows a rising line; a flat one after warm-up is not it.
//   deno run -A --v8-flags=--expose-gc bench/media/anon_memory_per_call.ts vad|opus|tts [calls=150]
// A call's worth: vad = one Silero stream over 30 s of pink noise; opus = an encoder and a decoder
// over 30 s; tts = espeak-ng (its thread's WASM memory) saying five sentences of varying length.
import { byKind, readMappings } from "./mappings.ts";
import { VoiceActivity } from "../../media/vad/voice_activity.ts";
import { sileroModel } from "../../media/vad/silero.ts";
import { EspeakEngine } from "../../media/tts/espeak_engine.ts";
import { OpusDecoder, OpusEncoder } from "../../wasm/opus.ts";
import { pinkNoise } from "../../tests/helpers/test_signals.ts";

const part = Deno.args[0] ?? "vad";
const calls = Number(Deno.args[1] ?? 150);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with --v8-flags=--expose-gc");
if (!["vad", "opus", "tts"].includes(part)) throw new Error(`unknown part ${part}`);

const model = await sileroModel();
const noise = pinkNoise(30_000, -25); // 30 s at 16 kHz
const tone = new Int16Array(960).map((_, i) => Math.round(8000 * Math.sin(i / 7)));
const espeak = part === "tts" ? new EspeakEngine() : undefined;
await espeak?.ready;
const SENTENCES = [
  "Hello.",
  "Once upon a time, a small robot lived in a lighthouse by the sea.",
  "Every night it counted the ships that passed and wished one of them would stop.",
  "Your order number is four two seven one nine, and it ships on Tuesday.",
  "Thank you for calling, goodbye.",
];

const mb = (kb = 0) => (kb / 1024).toFixed(1);
function reading(): string {
  gc!();
  const k = byKind(readMappings(Deno.pid));
  const m = Deno.memoryUsage();
  return `anon other ${mb(k.get("anon other"))} MB, C heap ${
    mb((k.get("C heap (brk)") ?? 0) + (k.get("C heap (thread arenas)") ?? 0))
  } MB, JS heap used ${(m.heapUsed / 2 ** 20).toFixed(1)} MB`;
}

async function oneCall(c: number): Promise<void> {
  if (part === "vad") {
    const vad = new VoiceActivity(model);
    for (let i = 0; i < noise.length; i += 320) await vad.push(noise.subarray(i, i + 320));
    vad.close();
  } else if (part === "opus") {
    const enc = new OpusEncoder({ complexity: 5 });
    const dec = new OpusDecoder({ sampleRate: 48000 });
    for (let i = 0; i < 1500; i++) dec.decode(enc.encode(tone));
    enc.close();
    dec.close();
  } else {
    for (const [i, text] of SENTENCES.entries()) {
      const options = { voice: "VOICE_ANANYA", language: "LANGUAGE_EN" };
      // Varying lengths from call to call, so allocations do not repeat exactly.
      const said = `${text} ${"and again ".repeat((c + i) % 7)}`;
      for await (const _ of espeak!.synthesize(said, options)) { /* drain */ }
    }
  }
}

console.log(`${part}, call 0: ${reading()}`);
for (let c = 1; c <= calls; c++) {
  await oneCall(c);
  if (c % 25 === 0) console.log(`${part}, call ${c}: ${reading()}`);
}
await espeak?.close();
