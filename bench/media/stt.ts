// Recognition cost, memory and latency of the pocketsphinx engine (media/stt/pocketsphinx.ts),
// the former scheme ("old": a decoder per call, each with its own language model, a second pass
// over every call's first utterance) against the current one ("new": a decoder per utterance
// from the thread's pool, one shared language model per thread, a warm CMN prior), same run.
// Run: deno run -A bench/media/stt.ts [--wer] [--no-realtime] [--no-steady]   (BENCH_STT_AB: see 5a)
//      BENCH_STT_ORDER=old,new  BENCH_STT_UTTERANCES=4 (per stream per run)  BENCH_STT_LEVELS=1:1,4:1,8:1,4:2,8:2 (streams:threads)
//
// Audio: the test callers' voice (festival) speaking tests/helpers/test_speech.ts sentences,
// through Opus (48 kHz encode, 16 kHz decode) as a call's audio. Figures, nothing asserted:
//  1. startup: PocketsphinxEngine.create() (threads + their spare decoders) and open();
//  2. memory: in a fresh process per scheme (freed C memory stays in the allocator, so one
//     process cannot measure both), 8 streams open on 2 threads that all spoke, two at a time:
//     decoders held and RSS per open stream;
//  3. CPU per audio second on this thread (getrusage RUSAGE_THREAD), first and later utterances,
//     and the work left at finish (what delays the final text);
//  4. real-time runs: N streams each speaking utterances in real time (20 ms frames, 600 ms
//     pauses), finish() right after each utterance's last frame: finish latency, recognition
//     threads' CPU per audio second, decoders made, the main thread's 20 ms timer lateness;
//  5. with --wer: WER and CPU per decoding scheme and option on DEV_SCRIPTS (30, where choices
//     were made) and HELD_SCRIPTS (12, checked after), 16 kHz and through Opus.
import process from "node:process";
import {
  PocketsphinxEngine,
  type PocketsphinxOptions,
  SPEED_ARGS,
} from "../../media/stt/pocketsphinx.ts";
import {
  CallRecogniser,
  DecoderPool,
  type PoolOptions,
  type RecogniserOptions,
} from "../../media/stt/pocketsphinx_decoding.ts";
import { type DecoderArgs, enUsArgs } from "../../media/stt/pocketsphinx_ffi.ts";
import type { RecognitionStream } from "../../media/stt/engine.ts";
import {
  DEV_SCRIPTS,
  HELD_SCRIPTS,
  SCRIPTS,
  speech16k,
  speechThroughOpus,
} from "../../tests/helpers/test_speech.ts";
import { threadNames } from "../../common/thread_name.ts";
import { werCount } from "../../media/stt/wer.ts";
import { setQuiet } from "../../common/log.ts";
import { mean, percentile as pct } from "../harness/stats.ts";
import { setTimeout as sleep } from "node:timers/promises";

setQuiet(true);
const UTTERANCES = Number(Deno.env.get("BENCH_STT_UTTERANCES") ?? 4);
const LEVELS = (Deno.env.get("BENCH_STT_LEVELS") ?? "1:1,4:1,8:1,4:2,8:2").split(",")
  .map((l) => l.split(":").map(Number) as [number, number]);
const FRAME = 320;
/** Skips sections 1-3, e.g. to repeat the real-time runs or the WER tables alone. */
const SKIP_STEADY = Deno.args.includes("--no-steady");
const PAUSE_MS = 600;

/** The two schemes compared throughout, as engine options and as pool/recogniser options. */
const SCHEMES = {
  old: {
    engine: {
      decoderPerCall: true,
      shareLanguageModel: false,
      warmPrior: false,
      firstUtteranceBatchMaxMs: 10_000,
      spareDecoders: 1,
      maxIdleDecoders: 2,
      decoderArgs: { maxhmmpf: "30000" }, // the library's default
    } satisfies PocketsphinxOptions,
    pool: { shareLm: false, warmPrior: false },
    rec: { decoderPerCall: true, firstUtteranceBatchMaxMs: 10_000 },
    args: {},
  },
  new: {
    // BENCH_STT_NEW='{"spareDecoders":2}' tries engine options in the real-time runs.
    engine: JSON.parse(Deno.env.get("BENCH_STT_NEW") ?? "{}") as PocketsphinxOptions,
    pool: {},
    rec: {},
    args: SPEED_ARGS,
  },
} as const;
type SchemeName = keyof typeof SCHEMES;
/** Order of the real-time runs (BENCH_STT_ORDER=new,old to rule out drift of the machine's load). */
const ORDER = (Deno.env.get("BENCH_STT_ORDER") ?? "old,new").split(",") as SchemeName[];
/** The engine's defaults for what a scheme leaves out (mirrors PocketsphinxEngine.create). */
const REC_DEFAULTS: RecogniserOptions = { interimMs: 300, firstUtteranceBatchMaxMs: 10_000 };

const ms = (x: number) => `${x.toFixed(0)} ms`;
const rssMb = () =>
  Number(Deno.readTextFileSync("/proc/self/status").match(/VmRSS:\s+(\d+)/)![1]) / 1024;

/** This thread's CPU time in ms (getrusage RUSAGE_THREAD), for synchronous decoding here. */
const libc = Deno.dlopen("libc.so.6", {
  getrusage: { parameters: ["i32", "buffer"], result: "i32" },
});
function threadCpuMs(): number {
  const ru = new BigInt64Array(18);
  libc.symbols.getrusage(1, ru);
  return Number(ru[0]) * 1000 + Number(ru[1]) / 1000 + Number(ru[2]) * 1000 + Number(ru[3]) / 1000;
}

/** CPU ms of this process's threads named "recognition" (clock ticks of /proc, 10 ms). */
function recognitionThreadsCpuMs(): number {
  let ticks = 0;
  for (const [tid, name] of threadNames()) {
    if (name !== "recognition") continue;
    try {
      const f = Deno.readTextFileSync(`/proc/self/task/${tid}/stat`);
      const after = f.slice(f.lastIndexOf(")") + 2).split(" ");
      ticks += Number(after[11]) + Number(after[12]); // utime, stime
    } catch {
      // the thread ended
    }
  }
  return ticks * 10;
}

// ── 2 (child process). memory of one scheme ───────────────────────────────────────────────────
if (Deno.args[0] === "--memory-probe") {
  const scheme = Deno.args[1] as SchemeName;
  const audio = await Promise.all(SCRIPTS.map((s) => speechThroughOpus(s)));
  const engine = await PocketsphinxEngine.create({ threads: 2, ...SCHEMES[scheme].engine });
  const before = rssMb();
  const streams: RecognitionStream[] = [];
  for (let i = 0; i < 8; i++) streams.push(await engine.open("LANGUAGE_EN"));
  // Two callers speak at a time (frames interleaved), until each of the 8 has spoken.
  for (let i = 0; i < 8; i += 2) {
    const [a, b] = [audio[i], audio[i + 1]];
    for (let o = 0; o < Math.max(a.length, b.length); o += FRAME) {
      if (o < a.length) streams[i].push(a.subarray(o, o + FRAME));
      if (o < b.length) streams[i + 1].push(b.subarray(o, o + FRAME));
    }
    await Promise.all([streams[i].finish(), streams[i + 1].finish()]);
  }
  const st = await engine.stats();
  console.log(JSON.stringify({
    before,
    perStream: (rssMb() - before) / 8,
    held: st.decodersInUse + st.idleDecoders,
    inUse: st.decodersInUse,
    made: st.decodersMade,
  }));
  for (const s of streams) s.close();
  await engine.close();
  Deno.exit(0);
}

console.log("preparing audio (festival → Opus → 16 kHz) ...");
const audio = await Promise.all(SCRIPTS.map((s) => speechThroughOpus(s)));
const audioMs = (pcm: Int16Array) => pcm.length / 16;

// ── 1. startup ────────────────────────────────────────────────────────────────────────────────
if (!SKIP_STEADY) {
  let t = performance.now();
  const engine = await PocketsphinxEngine.create();
  const created = performance.now() - t;
  t = performance.now();
  const s = await engine.open("LANGUAGE_EN");
  const opened = performance.now() - t;
  s.close();
  await engine.close();
  console.log(
    `\n1. startup: create() ${ms(created)} (threads + ps_init of their spares), open() ${
      opened.toFixed(1)
    } ms`,
  );
}

// ── 2. memory ─────────────────────────────────────────────────────────────────────────────────
if (!SKIP_STEADY) {
  console.log(
    "\n2. memory: 8 streams open on 2 threads, each spoke once, two at a time (fresh process each)",
  );
  const probe: Record<string, { before: number; perStream: number; held: number; made: number }> =
    {};
  for (const scheme of Object.keys(SCHEMES)) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", new URL(import.meta.url).pathname, "--memory-probe", scheme],
      stderr: "inherit",
    }).output();
    probe[scheme] = JSON.parse(new TextDecoder().decode(out.stdout).trim().split("\n").at(-1)!);
    const p = probe[scheme];
    console.log(
      `   ${scheme}: RSS after create() ${p.before.toFixed(0)} MB; decoders held ${p.held} ` +
        `(made ${p.made}); RSS per open stream ${p.perStream.toFixed(1)} MB`,
    );
  }
  console.log(
    `   new / old: RSS per open stream ×${(probe.new.perStream / probe.old.perStream).toFixed(2)}`,
  );
}

// ── 3. CPU on this thread ─────────────────────────────────────────────────────────────────────
function decodeChunks(rec: CallRecogniser, pcm: Int16Array): string {
  for (let o = 0; o < pcm.length; o += 1600) rec.push(pcm.subarray(o, o + 1600));
  return rec.finish();
}

if (!SKIP_STEADY) {
  console.log(
    `\n3. CPU per audio second on one thread (${audio.length} calls, 2 utterances each of ${
      (mean(audio.map(audioMs)) / 1000).toFixed(1)
    } s)`,
  );
  for (const [scheme, sc] of Object.entries(SCHEMES)) {
    const pool = new DecoderPool({ ...enUsArgs(), ...sc.args }, {
      spares: 0,
      maxIdle: 2,
      ...sc.pool,
    });
    const cpu = { first: 0, later: 0 }, secs = { first: 0, later: 0 };
    const fin1: number[] = [], finN: number[] = [];
    for (let i = 0; i < audio.length; i++) {
      const rec = new CallRecogniser(pool, { ...REC_DEFAULTS, ...sc.rec });
      for (const k of [i, (i + 1) % audio.length]) {
        const which = k === i ? "first" : "later";
        const pcm = audio[k];
        const c0 = threadCpuMs();
        for (let o = 0; o < pcm.length; o += 1600) rec.push(pcm.subarray(o, o + 1600));
        const t1 = performance.now();
        rec.finish();
        (k === i ? fin1 : finN).push(performance.now() - t1);
        cpu[which] += threadCpuMs() - c0;
        secs[which] += audioMs(pcm) / 1000;
      }
      rec.close();
    }
    pool.close();
    console.log(
      `   ${scheme}: first utterance ${(cpu.first / secs.first / 1000).toFixed(3)} s/s, ` +
        `work left at finish ${ms(mean(fin1))} (max ${ms(Math.max(...fin1))}); later ${
          (cpu.later / secs.later / 1000).toFixed(3)
        } s/s, ${ms(mean(finN))} (max ${ms(Math.max(...finN))})`,
    );
  }
}

// ── 4. real-time runs ─────────────────────────────────────────────────────────────────────────

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
async function speakRealTime(
  speakers: Speaker[],
): Promise<{ first: number[]; later: number[]; audioS: number }> {
  const first: number[] = [], later: number[] = [];
  let audioS = 0;
  await Promise.all(speakers.map(async (sp, j) => {
    await sleep(j * 137 % 600); // callers do not start in step
    for (let u = 0; u < UTTERANCES; u++) {
      const pcm = audio[(j + u) % audio.length];
      audioS += audioMs(pcm) / 1000;
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
  return { first, later, audioS };
}

const lagLine = (lags: number[]) =>
  `loop lag p50 ${pct(lags, 50).toFixed(1)} / p99 ${pct(lags, 99).toFixed(1)} / max ${
    Math.max(...lags).toFixed(1)
  } ms`;
const finLine = (xs: number[]) =>
  `mean ${ms(mean(xs))}, p90 ${ms(pct(xs, 90))}, max ${ms(Math.max(...xs))}`;

if (!Deno.args.includes("--no-realtime")) {
  console.log(
    `\n4. real time: ${UTTERANCES} utterances per stream, ${PAUSE_MS} ms pauses, 20 ms frames`,
  );
  {
    const idle = await lagDuring(() => sleep(5000));
    console.log(`   nothing running (5 s):           ${lagLine(idle)}`);
  }
  for (const [streams, threads] of LEVELS) {
    for (const scheme of ORDER) {
      const sc = SCHEMES[scheme];
      const engine = await PocketsphinxEngine.create({ threads, ...sc.engine });
      const opened: RecognitionStream[] = [];
      for (let i = 0; i < streams; i++) opened.push(await engine.open("LANGUAGE_EN"));
      const cpu0 = process.cpuUsage(), w0 = performance.now(), r0 = recognitionThreadsCpuMs();
      let fin = { first: [] as number[], later: [] as number[], audioS: 0 };
      const lags = await lagDuring(async () => {
        fin = await speakRealTime(opened);
      });
      const cpu = process.cpuUsage(cpu0), wall = performance.now() - w0;
      const recCpu = recognitionThreadsCpuMs() - r0;
      const st = await engine.stats();
      for (const s of opened) s.close();
      await engine.close();
      console.log(
        `   ${streams} stream(s), ${threads} thread(s), ${scheme}: ${lagLine(lags)}; process CPU ${
          ((cpu.user + cpu.system) / 1000 / wall * 100).toFixed(0)
        } % of a core; recognition threads ${(recCpu / fin.audioS / 1000).toFixed(3)} s/s of ` +
          `audio; decoders made ${st.decodersMade}, held at the end ${
            st.decodersInUse + st.idleDecoders
          }, utterances that waited for ps_init ${st.utterancesWaited}\n` +
          `      finish latency, first utterance: ${finLine(fin.first)}\n` +
          `      finish latency, later:           ${finLine(fin.later)}`,
      );
    }
  }
  {
    // The same decoding on this thread: what the media worker's loop would suffer without Workers.
    const pool = new DecoderPool({ ...enUsArgs(), ...SPEED_ARGS }, { spares: 4, maxIdle: 4 });
    while (pool.fillOne());
    const recs = Array.from({ length: 4 }, () => new CallRecogniser(pool, { ...REC_DEFAULTS }));
    let fin = { first: [] as number[], later: [] as number[], audioS: 0 };
    const lags = await lagDuring(async () => {
      fin = await speakRealTime(recs.map((r) => ({
        push: (pcm: Int16Array) => r.push(pcm.slice()),
        finish: () => Promise.resolve(r.finish()),
      })));
    });
    for (const r of recs) r.close();
    pool.close();
    console.log(
      `   4 streams decoded ON THIS THREAD (new): ${lagLine(lags)}\n` +
        `      finish latency, first utterance: ${finLine(fin.first)}; later: ${
          finLine(fin.later)
        }`,
    );
  }
}

// ── 5. word error rate and CPU per scheme and option ──────────────────────────────────────────
if (Deno.args.includes("--wer")) {
  interface Config {
    pool?: Partial<PoolOptions>;
    rec?: Partial<RecogniserOptions>;
    args?: DecoderArgs;
  }
  // Rows 1-4 change one thing at a time from the old scheme; "new" is the engine's default.
  const BASE = { maxhmmpf: "30000" }, LIVE = { firstUtteranceBatchMaxMs: 0 };
  const all: [string, Config][] = [
    ["old: per call, own LM, 2 passes", SCHEMES.old],
    ["per utt., shared LM, 2 passes, model prior", { pool: { warmPrior: false }, args: BASE }],
    ["per utt., model prior, live only", { pool: { warmPrior: false }, rec: LIVE, args: BASE }],
    ["per utt., warm prior, 2 passes always", { pool: { warmPrior: true }, args: BASE }],
    ["per utt., warm prior, live only", { rec: LIVE, args: BASE }],
    ["new: warm prior, 2 passes only cold, SPEED_ARGS", { args: SPEED_ARGS }],
    ["new + -maxwpf 5", { args: { ...SPEED_ARGS, maxwpf: "5" } }],
    ["new, -maxhmmpf 30000 + -ds 2", { args: { ...BASE, ds: "2" } }],
    ["new, -maxhmmpf 30000 + -topn 2", { args: { ...BASE, topn: "2" } }],
    ["new, -maxhmmpf 30000 + -maxwpf 5", { args: { ...BASE, maxwpf: "5" } }],
    ["new, -maxhmmpf 30000 + -pl_window 10", { args: { ...BASE, pl_window: "10" } }],
    ["new, -maxhmmpf 30000 + -fwdflat no", { args: { ...BASE, fwdflat: "no" } }],
    ["new, -maxhmmpf 30000 + -bestpath no", { args: { ...BASE, bestpath: "no" } }],
  ];
  const only = Deno.env.get("BENCH_STT_WER_CONFIGS"); // e.g. "0,4" (indexes above)
  const configs = only === "none" ? [] : only ? only.split(",").map((i) => all[Number(i)]) : all;
  const sets = [
    ["dev", DEV_SCRIPTS],
    ["held", HELD_SCRIPTS],
  ] as const;
  const paths = (Deno.env.get("BENCH_STT_WER_PATHS") ?? "16 kHz,Opus").split(",");
  console.log("\npreparing WER audio ...");
  const pcm = new Map<string, Int16Array[]>();
  for (const [set, scripts] of sets) {
    for (const path of paths) {
      pcm.set(
        `${set} ${path}`,
        await Promise.all(
          scripts.map((s) => path === "Opus" ? speechThroughOpus(s) : speech16k(s)),
        ),
      );
    }
  }
  {
    // Decoder options A/B: each utterance decoded by every variant in turn on this thread, so
    // machine load hits them alike; CPU as a ratio to the library's defaults.
    // BENCH_STT_AB='[["name", {"beam": "1e-40"}], ...]': the engine's options against these.
    const ab = Deno.env.get("BENCH_STT_AB");
    const variants: [string, DecoderArgs][] = ab
      ? [["engine (SPEED_ARGS)", SPEED_ARGS], ...(JSON.parse(ab) as [string, DecoderArgs][])]
      : [
        ["library defaults (-maxhmmpf 30000)", { maxhmmpf: "30000" }],
        ["engine (SPEED_ARGS)", SPEED_ARGS],
        ["engine + -maxwpf 5", { ...SPEED_ARGS, maxwpf: "5" }],
        ["library + -ds 2", { maxhmmpf: "30000", ds: "2" }],
        ["library + -topn 2", { maxhmmpf: "30000", topn: "2" }],
        ["library + -fwdflat no", { maxhmmpf: "30000", fwdflat: "no" }],
      ];
    const pools = variants.map(([, a]) =>
      new DecoderPool({ ...enUsArgs(), ...a }, { spares: 0, maxIdle: 1, warmPrior: false })
    );
    const cpu = variants.map(() => 0);
    const errors = variants.map(() => [0, 0]);
    const words = [0, 0];
    const sets2 = paths.includes("Opus") ? ["dev Opus", "held Opus"] : [`dev ${paths[0]}`];
    sets2.forEach((key, k) => {
      const scripts = key.startsWith("dev") ? DEV_SCRIPTS : HELD_SCRIPTS;
      const calls = pools.map((p) => new CallRecogniser(p, { ...REC_DEFAULTS }));
      pcm.get(key)!.forEach((p, i) => {
        words[k] += werCount(scripts[i], "").words;
        calls.forEach((rec, v) => {
          const c0 = threadCpuMs();
          const text = decodeChunks(rec, p);
          cpu[v] += threadCpuMs() - c0;
          errors[v][k] += werCount(scripts[i], text).errors;
        });
      });
      calls.forEach((c) => c.close());
    });
    pools.forEach((p) => p.close());
    console.log(
      `\n5a. decoder options, interleaved on one call each (${sets2.join(", ")}): WER, CPU ratio` +
        `\n| options | WER dev | WER held | CPU vs ${variants[0][0]} |\n|---|---|---|---|`,
    );
    variants.forEach(([name], v) => {
      const w = (k: number) => words[k] ? `${(100 * errors[v][k] / words[k]).toFixed(1)} %` : "-";
      console.log(`| ${name} | ${w(0)} | ${w(1)} | ×${(cpu[v] / cpu[0]).toFixed(2)} |`);
    });
  }
  console.log(
    "\n5. WER, festival: each sentence as a new call's first utterance (calls in a row on one " +
      "thread's pool, so the warm prior learns from the calls before), and all in a row on one " +
      "call; CPU per audio second on this thread (first-utterance runs)" +
      "\n| decoding | audio | first, dev 30 | first, held 12 | one call, dev 30 | one call, held 12 | CPU s/s |" +
      "\n|---|---|---|---|---|---|---|",
  );
  for (const [name, c] of configs) {
    for (const path of paths) {
      const cells: string[] = [];
      let cpu = 0, secs = 0;
      for (const mode of ["first", "one call"]) {
        for (const [set, scripts] of sets) {
          const pool = new DecoderPool({ ...enUsArgs(), ...c.args }, {
            spares: 0,
            maxIdle: 1,
            ...c.pool,
          });
          const opts = { ...REC_DEFAULTS, ...c.rec };
          const pcms = pcm.get(`${set} ${path}`)!;
          let errors = 0, words = 0;
          const call = new CallRecogniser(pool, opts);
          for (let i = 0; i < scripts.length; i++) {
            const rec = mode === "first" ? new CallRecogniser(pool, opts) : call;
            const c0 = threadCpuMs();
            const w = werCount(scripts[i], decodeChunks(rec, pcms[i]));
            if (mode === "first") {
              cpu += threadCpuMs() - c0;
              secs += audioMs(pcms[i]) / 1000;
              rec.close();
            }
            errors += w.errors;
            words += w.words;
          }
          call.close();
          pool.close();
          cells.push(`${(100 * errors / words).toFixed(1)} %`);
        }
      }
      console.log(
        `| ${name} | ${path} | ${cells.join(" | ")} | ${(cpu / secs / 1000).toFixed(3)} |`,
      );
    }
  }
}
libc.close();
