// Recognition cost and latency of the pocketsphinx engine (media/stt/pocketsphinx.ts).
// Run: deno run -A bench/media/stt.ts [--wer]
//      BENCH_STT_UTTERANCES=4 (per stream per run)  BENCH_STT_LEVELS=1:1,4:1,8:1,4:2,8:2 (streams:threads)
//
// Audio: the test callers' voice (festival) speaking media/stt/test_speech.ts SCRIPTS, through
// Opus (48 kHz encode, 16 kHz decode) as a call's audio. Figures, nothing asserted:
//  1. startup: PocketsphinxEngine.create() (threads + one spare decoder each) and open();
//  2. RTF: thread-side work per second of audio, measured synchronously on this thread with the
//     same code the thread runs (CallRecogniser), for the first (two-pass) and later utterances;
//  3. real-time runs: N streams each speaking utterances in real time (20 ms frames on a monotonic
//     clock, 600 ms pauses), finish() right after each utterance's last frame. Finish latency is
//     finish() → final text. Meanwhile a 20 ms timer on this thread records how late it fires
//     (event-loop lag), against the same timer with nothing running, and against decoding
//     on this thread instead of a Worker (what the thread saves the media worker's loop from);
//  4. with --wer: word error rate table per voice, audio path and decoder configuration.
import process from "node:process";
import { PocketsphinxEngine } from "../../media/stt/pocketsphinx.ts";
import { CallRecogniser, DecoderPool } from "../../media/stt/pocketsphinx_decoding.ts";
import { type DecoderArgs, enUsArgs } from "../../media/stt/pocketsphinx_ffi.ts";
import type { RecognitionStream } from "../../media/stt/engine.ts";
import { SCRIPTS, speech16k, speechThroughOpus } from "../../media/stt/test_speech.ts";
import { werCount } from "../../media/stt/wer.ts";
import { setQuiet } from "../../common/log.ts";

setQuiet(true);
const UTTERANCES = Number(Deno.env.get("BENCH_STT_UTTERANCES") ?? 4);
const LEVELS = (Deno.env.get("BENCH_STT_LEVELS") ?? "1:1,4:1,8:1,4:2,8:2").split(",")
  .map((l) => l.split(":").map(Number) as [number, number]);
const FRAME = 320;
const PAUSE_MS = 600;

const ms = (x: number) => `${x.toFixed(0)} ms`;
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : NaN;
};
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const sleep = (t: number) => new Promise<void>((r) => setTimeout(r, t));

console.log("preparing audio (festival → Opus → 16 kHz) ...");
const audio = await Promise.all(SCRIPTS.map((s) => speechThroughOpus(s)));
const audioMs = (pcm: Int16Array) => pcm.length / 16;

// ── 1. startup ────────────────────────────────────────────────────────────────────────────────
{
  let t = performance.now();
  const engine = await PocketsphinxEngine.create();
  const created = performance.now() - t;
  t = performance.now();
  const s = await engine.open("LANGUAGE_EN");
  const opened = performance.now() - t;
  s.close();
  await engine.close();
  console.log(
    `\n1. startup: create() ${ms(created)} (thread + ps_init of one spare), open() ${
      opened.toFixed(1)
    } ms (spare taken)`,
  );
}

// ── 2. RTF on this thread ─────────────────────────────────────────────────────────────────────
{
  const pool = new DecoderPool(enUsArgs(), 0, 1);
  const first: number[] = [], later: number[] = [], fin1: number[] = [], finN: number[] = [];
  for (let i = 0; i < audio.length; i++) {
    const { decoder } = pool.take();
    const rec = new CallRecogniser(decoder, { interimMs: 300, firstUtteranceBatchMaxMs: 10_000 });
    for (const k of [i, (i + 1) % audio.length]) {
      const pcm = audio[k];
      const t0 = performance.now();
      for (let o = 0; o < pcm.length; o += 1600) rec.push(pcm.subarray(o, o + 1600));
      const t1 = performance.now();
      rec.finish();
      const t2 = performance.now();
      (k === i ? first : later).push((t2 - t0) / audioMs(pcm));
      (k === i ? fin1 : finN).push(t2 - t1);
    }
    pool.give(decoder);
  }
  pool.freeIdle();
  console.log(
    `\n2. realtime factor (CPU per audio, one thread, ${audio.length} utterances of ${
      (mean(audio.map(audioMs)) / 1000).toFixed(1)
    } s):\n` +
      `   first utterance of a call (live + batch pass): RTF ${mean(first).toFixed(3)} ` +
      `(max ${Math.max(...first).toFixed(3)}); work left at finish ${ms(mean(fin1))} (max ${
        ms(Math.max(...fin1))
      })\n` +
      `   later utterances (live only):                 RTF ${mean(later).toFixed(3)} ` +
      `(max ${Math.max(...later).toFixed(3)}); work left at finish ${ms(mean(finN))} (max ${
        ms(Math.max(...finN))
      })`,
  );
}

// ── 3. real-time runs ─────────────────────────────────────────────────────────────────────────

/**
 * Records how late a 20 ms timer fires while `work` runs. Each tick is aimed at the previous
 * aim + 20 ms (no drift accumulates); after a stall it re-aims from now.
 */
async function lagDuring(work: () => Promise<void>): Promise<number[]> {
  const lags: number[] = [];
  let aim = performance.now() + 20;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const tick = () => {
    const now = performance.now();
    lags.push(Math.max(0, now - aim));
    aim = Math.max(aim + 20, now + 1);
    timer = setTimeout(tick, aim - now);
  };
  timer = setTimeout(tick, 20);
  try {
    await work();
  } finally {
    clearTimeout(timer);
  }
  return lags;
}

interface Speaker {
  push(pcm: Int16Array): void;
  finish(): Promise<unknown>;
}

/** Each speaker says UTTERANCES utterances in real time; returns finish latencies (first, later). */
async function speakRealTime(speakers: Speaker[]): Promise<{ first: number[]; later: number[] }> {
  const first: number[] = [], later: number[] = [];
  await Promise.all(speakers.map(async (sp, j) => {
    await sleep(j * 137 % 600); // callers do not start in step
    for (let u = 0; u < UTTERANCES; u++) {
      const pcm = audio[(j + u) % audio.length];
      const t0 = performance.now();
      let sent = 0;
      while (sent < pcm.length) {
        const due = Math.min(pcm.length, Math.floor((performance.now() - t0 + 20) / 20) * FRAME);
        for (; sent < due; sent += FRAME) sp.push(pcm.subarray(sent, sent + FRAME));
        await sleep(20 - ((performance.now() - t0) % 20));
      }
      const t = performance.now();
      await sp.finish();
      (u === 0 ? first : later).push(performance.now() - t);
      await sleep(PAUSE_MS);
    }
  }));
  return { first, later };
}

const lagLine = (lags: number[]) =>
  `loop lag p50 ${pct(lags, 50).toFixed(1)} / p99 ${pct(lags, 99).toFixed(1)} / max ${
    Math.max(...lags).toFixed(1)
  } ms`;
const finLine = (xs: number[]) =>
  `mean ${ms(mean(xs))}, p90 ${ms(pct(xs, 90))}, max ${ms(Math.max(...xs))}`;

console.log(
  `\n3. real time: ${UTTERANCES} utterances per stream, ${PAUSE_MS} ms pauses, 20 ms frames`,
);
{
  const idle = await lagDuring(() => sleep(5000));
  console.log(`   nothing running (5 s):           ${lagLine(idle)}`);
}
for (const [streams, threads] of LEVELS) {
  const engine = await PocketsphinxEngine.create({ threads, spareDecoders: 1 });
  const opened: RecognitionStream[] = [];
  for (let i = 0; i < streams; i++) opened.push(await engine.open("LANGUAGE_EN"));
  const cpu0 = process.cpuUsage(), w0 = performance.now();
  let fin = { first: [] as number[], later: [] as number[] };
  const lags = await lagDuring(async () => {
    fin = await speakRealTime(opened);
  });
  const cpu = process.cpuUsage(cpu0), wall = performance.now() - w0;
  for (const s of opened) s.close();
  await engine.close();
  console.log(
    `   ${streams} stream(s), ${threads} thread(s): ${lagLine(lags)}; process CPU ${
      ((cpu.user + cpu.system) / 1000 / wall * 100).toFixed(0)
    } % of a core\n` +
      `      finish latency, first utterance: ${finLine(fin.first)}\n` +
      `      finish latency, later:           ${finLine(fin.later)}`,
  );
}
{
  // The same decoding on this thread: what the media worker's loop would suffer without Workers.
  const pool = new DecoderPool(enUsArgs(), 0, 4);
  const recs = Array.from({ length: 4 }, () => {
    const { decoder } = pool.take();
    return new CallRecogniser(decoder, { interimMs: 300, firstUtteranceBatchMaxMs: 10_000 });
  });
  let fin = { first: [] as number[], later: [] as number[] };
  const lags = await lagDuring(async () => {
    fin = await speakRealTime(recs.map((r) => ({
      push: (pcm: Int16Array) => r.push(pcm.slice()),
      finish: () => Promise.resolve(r.finish()),
    })));
  });
  for (const r of recs) pool.give(r.decoder);
  pool.freeIdle();
  console.log(
    `   4 streams decoded ON THIS THREAD:  ${lagLine(lags)}\n` +
      `      finish latency, first utterance: ${finLine(fin.first)}; later: ${finLine(fin.later)}`,
  );
}

// ── 4. word error rate ────────────────────────────────────────────────────────────────────────
if (Deno.args.includes("--wer")) {
  const configs: [string, { batchMs: number; args?: DecoderArgs }][] = [
    ["live only, defaults", { batchMs: 0 }],
    ["engine default (1st utt. 2 passes)", { batchMs: 10_000 }],
    ["+ -fwdflat no", { batchMs: 10_000, args: { fwdflat: "no" } }],
    ["+ -lw 8", { batchMs: 10_000, args: { lw: "8" } }],
  ];
  console.log(
    "\n4. WER over SCRIPTS: each sentence as a call's first utterance; then all on one stream" +
      "\n| voice | audio | decoder | first utterance | one stream |\n|---|---|---|---|---|",
  );
  for (const voice of ["festival", "espeak"] as const) {
    for (const path of ["16 kHz", "Opus"]) {
      const pcms = await Promise.all(
        SCRIPTS.map((s) => path === "Opus" ? speechThroughOpus(s, voice) : speech16k(s, voice)),
      );
      for (const [name, c] of configs) {
        const pool = new DecoderPool({ ...enUsArgs(), ...c.args }, 0, 1);
        const opts = { interimMs: 300, firstUtteranceBatchMaxMs: c.batchMs };
        const decode = (rec: CallRecogniser, pcm: Int16Array) => {
          for (let o = 0; o < pcm.length; o += 1600) rec.push(pcm.subarray(o, o + 1600));
          return rec.finish();
        };
        const e = [0, 0], n = [0, 0];
        for (let i = 0; i < SCRIPTS.length; i++) {
          const { decoder } = pool.take();
          const w = werCount(SCRIPTS[i], decode(new CallRecogniser(decoder, opts), pcms[i]));
          pool.give(decoder);
          e[0] += w.errors;
          n[0] += w.words;
        }
        const { decoder } = pool.take();
        const call = new CallRecogniser(decoder, opts);
        for (let i = 0; i < SCRIPTS.length; i++) {
          const w = werCount(SCRIPTS[i], decode(call, pcms[i]));
          e[1] += w.errors;
          n[1] += w.words;
        }
        pool.give(decoder);
        pool.freeIdle();
        const p = (k: number) => `${(100 * e[k] / n[k]).toFixed(1)} %`;
        console.log(`| ${voice} | ${path} | ${name} | ${p(0)} | ${p(1)} |`);
      }
    }
  }
}
