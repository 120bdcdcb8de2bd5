// What the brain's opt-in caller events cost on its socket (media/call/brain_events.ts): the
// recogniser's interim hypotheses for real speech, each as an InterimText frame (the baseline: no
// bound), against what BrainEvents forwards (one per INTERIM_MIN_MS, no repeats), same run, same
// audio. Figures, nothing asserted.
// Run: deno run -A bench/media/brain_events.ts   (BENCH_EVENTS_SCRIPTS=8: sentences spoken)
//
// Audio: the test callers' festival voice speaking tests/helpers/test_speech.ts sentences at 16 kHz,
// pushed in real time (20 ms frames; the bound is on the wall clock, as in a call), a sentence per
// utterance, finish() after each.
import { PocketsphinxEngine } from "../../media/stt/pocketsphinx.ts";
import { SCRIPTS, speech16k } from "../../tests/helpers/test_speech.ts";
import { BrainEvents, INTERIM_MIN_MS } from "../../media/call/brain_events.ts";
import { encodeServiceFrame } from "../../proto/frames.ts";
import { setQuiet } from "../../common/log.ts";
import { setTimeout as sleep } from "node:timers/promises";

setQuiet(true);
const N = Number(Deno.env.get("BENCH_EVENTS_SCRIPTS") ?? 8);
const FRAME = 320; // 20 ms at 16 kHz

const engine = await PocketsphinxEngine.create();
const stream = await engine.open("LANGUAGE_EN");
const raw = { frames: 0, bytes: 0 };
const sent = { frames: 0, bytes: 0 };
let seq = 0;
const count = (tally: typeof raw, text: string) => {
  tally.frames++;
  tally.bytes += encodeServiceFrame(++seq, "interim_text", { text }).byteLength;
};
const events = new BrainEvents(
  (_kind, body) => count(sent, String(body.text)),
  () => ({ speech: false, interim_text: true, turn_metrics: false }),
);
stream.onInterim((text) => {
  count(raw, text);
  events.interim(text);
});

let speechMs = 0;
const start = performance.now();
for (const text of SCRIPTS.slice(0, N)) {
  const pcm = await speech16k(text);
  const t0 = performance.now();
  for (let i = 0; i < pcm.length; i += FRAME) {
    stream.push(pcm.subarray(i, i + FRAME));
    // Real time: the next frame is due 20 ms after this one.
    const due = t0 + (i / FRAME + 1) * 20;
    await sleep(Math.max(0, due - performance.now()));
  }
  speechMs += pcm.length / 16;
  await stream.finish();
  events.speechStarted(false); // a new utterance: the repeat check starts over, as in a call
}
const wallS = (performance.now() - start) / 1000;
stream.close();
await engine.close();

const perS = (n: number) => (n / (speechMs / 1000)).toFixed(2);
console.log(
  `${N} utterances, ${(speechMs / 1000).toFixed(1)} s of speech (${wallS.toFixed(1)} s wall)`,
);
console.log(`interim bound: ${INTERIM_MIN_MS} ms, no repeats\n`);
console.log(
  "| InterimText frames           | frames | per speech-s | bytes | bytes per speech-s |",
);
console.log("| --------------------------- | -----: | -----------: | ----: | -----------------: |");
for (const [name, t] of [["every hypothesis (baseline)", raw], ["bounded (sent)", sent]] as const) {
  console.log(
    `| ${name.padEnd(27)} | ${t.frames} | ${perS(t.frames)} | ${t.bytes} | ${perS(t.bytes)} |`,
  );
}
console.log(
  `\nbounded / baseline: ${(sent.frames / Math.max(1, raw.frames)).toFixed(2)}× frames, ` +
    `${(sent.bytes / Math.max(1, raw.bytes)).toFixed(2)}× bytes`,
);
