// Warm transfer (issue 35): what the worker's bridge costs and how long the person waits for the
// whisper. Run: deno task bench warm_transfer (~20 s).
//
// 1. The bridge relays each leg's 16 kHz frames into the other's 48 kHz play (RelaySource) on
//    top of what a phone call's line already does per 20 ms (the G.711 edge: CallerEdge decode +
//    upsample in, BotEdge downsample + encode out). Baseline, measured in the same run: that
//    edge. A bridged call is two lines' edges plus two relays.
// 2. The whisper is synthesised while the person's phone rings (warm_transfer.ts). Baseline:
//    synthesising it after the answer, as a naive order would; the person would hear silence for
//    the whole synthesis. Figures for three whisper lengths with the local engine (espeak-ng).
import { BotEdge, CallerEdge } from "../media/phone/edge_audio.ts";
import { RelaySource } from "../media/phone/relay_source.ts";
import { EspeakEngine } from "../media/tts/espeak_engine.ts";
import { DEFAULT_LANGUAGE, DEFAULT_VOICE } from "../common/capabilities.ts";

const FRAMES = 50 * 60 * 2; // two minutes of 20 ms frames
const f1 = (n: number) => n.toFixed(1);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// A 300 Hz tone with a little noise, as μ-law, the caller's side of a line.
const ulaw = new Uint8Array(160).map((_, i) => (i * 37 + 11) & 0xff);
const frame48 = new Int16Array(960).map((_, i) => Math.round(4000 * Math.sin(i / 25)));

/** µs per 20 ms frame of `step`, the median of five passes of FRAMES frames. */
function perFrame(step: () => void): number {
  for (let i = 0; i < 500; i++) step(); // warm the JIT and the wasm resamplers
  const runs: number[] = [];
  for (let r = 0; r < 5; r++) {
    const t0 = performance.now();
    for (let i = 0; i < FRAMES; i++) step();
    runs.push((performance.now() - t0) * 1000 / FRAMES);
  }
  return median(runs);
}

console.log("## the bridge's relay against a line's own G.711 edge (µs per 20 ms frame, median)");
let last: Int16Array = new Int16Array(320);
const callerEdge = new CallerEdge("PCMU", (pcm) => (last = pcm));
const botEdge = new BotEdge("PCMU");
const edge = perFrame(() => {
  callerEdge.pushPayload(ulaw);
  botEdge.encode(frame48);
});
const relay = new RelaySource();
const relayed = perFrame(() => {
  relay.push(last);
  relay.next();
});
console.log(`line edge (in + out), baseline:   ${f1(edge)} µs`);
console.log(`relay (one direction):            ${f1(relayed)} µs`);
console.log(
  `a bridged call (2 edges + 2 relays): ${f1(2 * edge + 2 * relayed)} µs per 20 ms = ${
    f1((2 * edge + 2 * relayed) / 200)
  } % of a core; the relays add ${f1(100 * relayed / edge)} % to each line's edge`,
);

console.log("\n## the whisper: silence the person hears after answering (ms, median of 5)");
const engine = new EspeakEngine();
await engine.ready;
const WHISPERS = {
  short: "Priya, a refund.",
  typical: "Priya is calling about a refund for order four two seven. She is upset.",
  long: "Priya is calling about a refund for order four two seven, placed on the third. " +
    "She was charged twice and has been waiting a week. She has asked for a manager once.",
};
const synth = async (text: string) => {
  const t0 = performance.now();
  let samples = 0;
  for await (
    const c of engine.synthesize(text, { voice: DEFAULT_VOICE, language: DEFAULT_LANGUAGE })
  ) samples += c.pcm.length;
  return { ms: performance.now() - t0, audioMs: samples / 48 };
};
await synth("Warm up.");
// A phone rings for several seconds before anyone answers; 3 s is a quick pick-up.
const RING_MS = 3000;
console.log("whisper    audio    synthesis (after answer: baseline)    while ringing (3 s ring)");
for (const [name, text] of Object.entries(WHISPERS)) {
  const runs = [];
  for (let i = 0; i < 5; i++) runs.push(await synth(text));
  const ms = median(runs.map((r) => r.ms));
  const audio = runs[0].audioMs;
  console.log(
    `${name.padEnd(9)}  ${f1(audio / 1000)} s    ${f1(ms).padStart(8)}                           ${
      f1(Math.max(0, ms - RING_MS)).padStart(8)
    }`,
  );
}
await engine.close();
