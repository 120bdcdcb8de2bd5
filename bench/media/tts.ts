// Speech synthesis figures for media/tts (espeak-ng WASM in a Worker thread, resampled to 48 kHz).
// Run: deno run -A bench/media/tts.ts [runs]
//
// Prints, with no assertions:
//  1. start-up: engine construction → ready (load + warm-up), and resident memory per thread;
//  2. per unit (short / long, English / Hindi): time to first chunk, total time, audio length,
//     realtime factor (total time / audio length);
//  3. the main thread's event-loop lag under a 20 ms interval timer (what the call pacer sees):
//     idle baseline, then while the engine synthesizes back to back, then — the reason for the
//     thread — while espeak runs on the main thread itself;
//  4. queueing: 4 units started at once, with 1 and 2 threads: first-chunk time of each;
//  5. the resampler alone, per second of audio, by quality.

import { EspeakEngine } from "../../media/tts/espeak_engine.ts";
import type { SynthesisChunk } from "../../media/tts/engine.ts";
import { Espeak } from "../../wasm/espeak.ts";
import { resample, Resampler } from "../../wasm/resampler.ts";
import { percentile as pct } from "../harness/stats.ts";
import { setTimeout as sleep } from "node:timers/promises";

const RUNS = Number(Deno.args[0] ?? 15);

const UNITS = {
  "en short": ["LANGUAGE_EN", "Sure, I can help with that."],
  "en long": [
    "LANGUAGE_EN",
    "Thank you for calling. Your order was shipped this morning and should arrive within three " +
    "business days. If anything is missing when it arrives, call us back and we will sort it " +
    "out straight away, at no extra cost to you.",
  ],
  "hi short": ["LANGUAGE_HI", "जी हाँ, मैं आपकी मदद कर सकता हूँ।"],
  "hi long": [
    "LANGUAGE_HI",
    "कॉल करने के लिए धन्यवाद। आपका ऑर्डर आज सुबह भेज दिया गया है और तीन कार्य दिवसों में पहुँच " +
    "जाना चाहिए। अगर कुछ भी कम हो, तो हमें वापस कॉल करें और हम उसे तुरंत ठीक कर देंगे।",
  ],
} as const;

const f1 = (x: number) => x.toFixed(1);
const rssMb = () => Deno.memoryUsage().rss / 2 ** 20;

async function timeUnit(engine: EspeakEngine, language: string, text: string) {
  const t0 = performance.now();
  let first = NaN, samples = 0;
  for await (const c of engine.synthesize(text, { voice: "VOICE_ANANYA", language })) {
    if (Number.isNaN(first) && c.pcm.length) first = performance.now() - t0;
    samples += c.pcm.length;
  }
  return { first, total: performance.now() - t0, audioMs: samples / 48 };
}

/** Lateness of a 20 ms interval timer over `ms`, while `load` runs (if any). */
async function loopLag(ms: number, load?: (stop: () => boolean) => Promise<void>) {
  const lates: number[] = [];
  let last = performance.now(), stopped = false;
  const timer = setInterval(() => {
    const now = performance.now();
    lates.push(now - last - 20);
    last = now;
  }, 20);
  const work = load?.(() => stopped);
  await sleep(ms);
  stopped = true;
  await work;
  clearInterval(timer);
  return { p50: pct(lates, 50), p99: pct(lates, 99), max: Math.max(...lates), n: lates.length };
}

console.log(`# bench/media/tts.ts — ${RUNS} runs per unit, ${navigator.hardwareConcurrency} cores`);

// 1. start-up
{
  const rss0 = rssMb();
  const t0 = performance.now();
  const engine = new EspeakEngine();
  await engine.ready;
  const ready = performance.now() - t0;
  const rss1 = rssMb();
  const two = new EspeakEngine({ threads: 2 });
  await two.ready;
  const rss2 = rssMb();
  await two.close();
  console.log(`\n## start-up`);
  console.log(
    `engine ready (1 thread: spawn, load espeak + data, warm both personas): ${f1(ready)} ms`,
  );
  console.log(
    `resident memory: +${f1(rss1 - rss0)} MB for a 1-thread engine, +${
      f1(rss2 - rss1)
    } MB more for a 2-thread one`,
  );

  // 2. per unit
  console.log(`\n## per unit, 1 thread, idle engine (ms; median / p90 over ${RUNS})`);
  console.log(
    "unit        audio   first chunk        total            realtime factor",
  );
  for (const [name, [language, text]] of Object.entries(UNITS)) {
    await timeUnit(engine, language, text); // voice switch + first use of the language
    const rs = [];
    for (let i = 0; i < RUNS; i++) rs.push(await timeUnit(engine, language, text));
    const first = rs.map((r) => r.first), total = rs.map((r) => r.total);
    const rtf = rs.map((r) => r.total / r.audioMs);
    console.log(
      `${name.padEnd(10)} ${f1(pct(rs.map((r) => r.audioMs), 50)).padStart(7)}  ` +
        `${f1(pct(first, 50)).padStart(6)} / ${f1(pct(first, 90)).padEnd(8)}  ` +
        `${f1(pct(total, 50)).padStart(6)} / ${f1(pct(total, 90)).padEnd(8)}  ` +
        `${pct(rtf, 50).toFixed(3)} / ${pct(rtf, 90).toFixed(3)}`,
    );
  }

  // 3. event-loop lag
  console.log(`\n## main-thread lag of a 20 ms interval timer over 3 s (ms late)`);
  const show = (label: string, r: Awaited<ReturnType<typeof loopLag>>) =>
    console.log(
      `${label.padEnd(44)} p50 ${f1(r.p50).padStart(5)}  p99 ${f1(r.p99).padStart(6)}  max ${
        f1(r.max).padStart(6)
      }  (${r.n} ticks)`,
    );
  show("baseline: idle", await loopLag(3000));
  const [, longText] = UNITS["en long"];
  let units = 0, audioMs = 0;
  show(
    "engine synthesizing back to back (worker)",
    await loopLag(3000, async (stop) => {
      while (!stop()) {
        for await (
          const c of engine.synthesize(longText, { voice: "VOICE_ARJUN", language: "LANGUAGE_EN" })
        ) {
          audioMs += (c as SynthesisChunk).pcm.length / 48;
        }
        units++;
      }
    }),
  );
  console.log(`  (${units} long units = ${f1(audioMs / 1000)} s of audio made in ~3 s)`);
  const espeak = await Espeak.load();
  show(
    "espeak on the main thread, back to back",
    await loopLag(3000, async (stop) => {
      espeak.setVoice("en-us+m3");
      while (!stop()) {
        espeak.synthesize(longText, () => {});
        await sleep(0); // yields between units, as a naive caller would
      }
    }),
  );
  await engine.close();
}

// 4. queueing
console.log(`\n## 4 long English units started at once: first-chunk time of each (ms)`);
for (const threads of [1, 2]) {
  const engine = new EspeakEngine({ threads });
  await engine.ready;
  const [language, text] = UNITS["en long"];
  const firsts: number[][] = [];
  for (let run = 0; run < 5; run++) {
    const rs = await Promise.all([0, 1, 2, 3].map(() => timeUnit(engine, language, text)));
    firsts.push(rs.map((r) => r.first));
  }
  const med = [0, 1, 2, 3].map((i) => pct(firsts.map((f) => f[i]), 50));
  console.log(
    `${threads} thread${threads > 1 ? "s" : " "}: ${
      med.map((x) => f1(x).padStart(6)).join(" ")
    }  (median of 5)`,
  );
  await engine.close();
}

// 5. resampler
console.log(`\n## resampler alone: ms per second of audio (median of ${RUNS})`);
const speechLike = (rate: number) =>
  Int16Array.from(
    { length: rate * 10 },
    (_, i) =>
      Math.round(
        8000 * Math.sin(2 * Math.PI * 180 * i / rate) +
          3000 * Math.sin(2 * Math.PI * 1400 * i / rate),
      ),
  );
const in22 = speechLike(22050), in48 = speechLike(48000);
for (const quality of [3, 5, 8]) {
  const up: number[] = [], down: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    let t = performance.now();
    const r = new Resampler(22050, 48000, { quality });
    for (let o = 0; o < in22.length; o += 2206) r.process(in22.subarray(o, o + 2206));
    r.flush();
    r.close();
    up.push((performance.now() - t) / 10);
    t = performance.now();
    resample(in48, 48000, 16000, { quality });
    down.push((performance.now() - t) / 10);
  }
  console.log(
    `quality ${quality}: 22.05→48 kHz ${pct(up, 50).toFixed(3)} ms/s, 48→16 kHz ${
      pct(down, 50).toFixed(3)
    } ms/s`,
  );
}
