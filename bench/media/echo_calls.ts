// Echo calls through the real service at 1, 10 and 50 simultaneous calls: the worker's CPU per
// second of call, its outbound pacing lateness, the callers' inter-arrival jitter, and whether
// every call got its speech back.
// Run: deno run -A bench/media/echo_calls.ts  (or `deno task bench`, after the connect bench)
//
// Three processes: this driver (with the API in-process — it is idle once the calls are up), the
// worker (media/main.ts, as tests/helpers/process.ts starts it) and one process holding every
// test caller (bench/media/echo_callers.ts). Each caller streams an espeak-ng sentence in a loop.
// Per level: connect all calls, warm up, then a steady-state window over which we read
//  - the worker's utime+stime from /proc/<pid>/stat (CPU of receive, decode, encode, send,
//    DTLS/SRTP and werift's bookkeeping), net of the idle worker's rate measured first;
//  - the worker's pacer lateness from GET /stats (histograms diffed between two snapshots);
//  - the callers' arrival gaps minus 20 ms and the RMS of the echo they decoded.
// Environment: BENCH_DATABASE_URL (a server where `create database` is allowed; default the
// local trust-auth PostgreSQL), BENCH_ECHO_LEVELS (default "1,10,50"), BENCH_ECHO_WINDOW_S
// (default 12), BENCH_ECHO_WARMUP_S (default 3), BENCH_ECHO_TREES (default ".": one worker from
// this tree; `before=/tmp/before,after=.` runs each level on a worker from each tree in turn, each
// with its own database and API, and prints after/before ratios: same run, same machine load),
// BENCH_ECHO_PIN=1 (the worker's threads on CPU 0, the callers' process and this one on the
// others, with taskset: the worker has a core of its own, as on a media node), BENCH_ECHO_PROFILE=1 (take a V8 CPU profile of each worker over each window through its
// inspector and print where the main thread's time went; the profiler's own overhead makes the
// CPU figures of such a run higher, so measure without it).
import { LineChild } from "../harness/line_child.ts";
import { createBenchDatabase } from "../harness/database.ts";
import { openDatabase } from "../../db/client.ts";
import { LatenessHistogram } from "../../media/audio/pacer.ts";
import { makeTenant, startTestApi } from "../../tests/helpers/api_server.ts";
import { speechWav } from "../../tests/helpers/audio.ts";
import type { CallersResult } from "./echo_callers.ts";
import { CLK_TCK, cpuSeconds, machineTicks, pinSplit, pinTo } from "../harness/proc.ts";
import { median } from "../harness/stats.ts";
import { markdownTable } from "../harness/table.ts";
import { startBenchWorker, waitNoCalls } from "../harness/worker.ts";
import { connectSession } from "../harness/session.ts";
import { setTimeout as sleep } from "node:timers/promises";
import { printProfile, Profiler } from "./profile.ts";

const LEVELS = (Deno.env.get("BENCH_ECHO_LEVELS") ?? "1,10,50").split(",").map(Number);
const WINDOW_S = Number(Deno.env.get("BENCH_ECHO_WINDOW_S") ?? 12);
const WARMUP_S = Number(Deno.env.get("BENCH_ECHO_WARMUP_S") ?? 3);
/** Echo RMS below this is silence (the test's silent stream decodes to ~0). */
const SILENCE_RMS = 50;
const MAX_CALLS = 200;
const TREES = (Deno.env.get("BENCH_ECHO_TREES") ?? ".").split(",").map((t, i) => {
  const [name, dir] = t.includes("=") ? t.split("=") : [i === 0 ? "current" : `tree${i}`, t];
  return { name, dir: dir === "." ? new URL("../..", import.meta.url).pathname : dir };
});
const PROFILE = Deno.env.get("BENCH_ECHO_PROFILE") === "1";
/** BENCH_ECHO_PIN=1: the worker on CPU 0, this process on the others (the callers it starts inherit that). */
const PIN = Deno.env.get("BENCH_ECHO_PIN") === "1" ? pinSplit() : null;
if (PIN && !pinTo(Deno.pid, PIN.bench)) throw new Error("BENCH_ECHO_PIN: taskset failed");

// ---- worker figures ----

interface Snapshot {
  at: number;
  machine: number;
  worker: number;
  callers?: number;
  stats: WorkerStats;
}

interface WorkerStats {
  calls: number;
  pacing: {
    ticks: number;
    skipped_frames: number;
    late_ms: { mean: number; p50: number; p99: number; max: number };
    histogram: { bucket_ms: number; max_ms: number; buckets: Record<string, number> };
  };
  memory: { rss_bytes: number };
}

/** Lateness over the window: the difference of two cumulative /stats histograms. */
function windowLateness(a: WorkerStats, b: WorkerStats) {
  const h = new LatenessHistogram(b.pacing.histogram.bucket_ms, b.pacing.histogram.max_ms);
  const top = h.counts.length - 1;
  for (const [i, n] of Object.entries(b.pacing.histogram.buckets)) {
    h.counts[Number(i)] = n - (a.pacing.histogram.buckets[i] ?? 0);
  }
  h.count = h.counts.reduce((x, y) => x + y, 0);
  let hi = top;
  while (hi > 0 && h.counts[hi] === 0) hi--;
  // The max within the window is only known to a bucket; past the range, the cumulative max.
  h.maxLateMs = hi === top ? b.pacing.late_ms.max : (hi + 1) * h.bucketMs;
  return { p50: h.quantile(0.5), p99: h.quantile(0.99), max: h.maxLateMs, ticks: h.count };
}

// ---- one level ----

export interface LevelResult {
  /** Which worker tree (BENCH_ECHO_TREES) ran it. */
  variant?: string;
  calls: number;
  connected: number;
  setupS: number;
  windowS: number;
  workerCpuS: number;
  /** Worker CPU over the window minus the idle rate, per call-second, in ms. */
  netMsPerCallSecond: number;
  /** The same per second of audio the worker actually sent (ticks run): fair when starved. */
  netMsPerSentSecond: number;
  workerCorePct: number;
  callersCorePct: number;
  /** Everything else on the machine over the window (other users' load skews lateness). */
  otherCorePct: number;
  pacer: { p50: number; p99: number; max: number; ticks: number; expectedTicks: number };
  skippedFrames: number;
  rx: { p50: number; p99: number; max: number; lossPct: number };
  callersLoopP99Ms: number;
  echo: { minRms: number; spokenRms: number; silent: number };
  rssMb: number;
}

/** A worker started from one tree (`media/main.ts` in `dir`), with its own database and API. */
interface Variant {
  name: string;
  workerUrl: string;
  workerPid: number;
  idle: number;
  api: Awaited<ReturnType<typeof startTestApi>>;
  tenant: Awaited<ReturnType<typeof makeTenant>>;
  profiler?: Profiler;
  close(): Promise<void>;
}

async function startVariant(name: string, dir: string): Promise<Variant> {
  const own = await createBenchDatabase("bench_echo");
  const database = await openDatabase({ url: own.url, max: 4 });
  const api = await startTestApi({
    RATE_LIMIT_PER_SECOND: "1000",
    RATE_LIMIT_BURST: "1000",
    PENDING_SESSIONS_PER_KEY: "0",
  }, { db: database, node: false });
  let worker: Awaited<ReturnType<typeof startBenchWorker>> | undefined;
  const close = async () => {
    await worker?.stop();
    await api.close();
    await database.close();
    await own.drop();
  };
  try {
    worker = await startBenchWorker(database.url, {
      root: dir,
      env: { WORKER_CAPACITY: String(MAX_CALLS) },
      inspect: PROFILE,
      pin: PIN?.worker,
    });
    const tenant = await makeTenant(api, "bench", { brain_url: "echo:" });
    const profiler = worker.inspectPort ? await Profiler.connect(worker.inspectPort) : undefined;
    return {
      name,
      workerUrl: worker.url,
      workerPid: worker.pid,
      idle: 0,
      api,
      tenant,
      profiler,
      close: async () => {
        profiler?.close();
        await close();
      },
    };
  } catch (e) {
    await close();
    throw e;
  }
}

async function main(): Promise<LevelResult[]> {
  Deno.chdir(new URL("../..", import.meta.url)); // BENCH_ECHO_TREES folders are relative to this checkout
  if (LEVELS.some((n) => !(n >= 1 && n <= MAX_CALLS))) throw new Error(`levels 1..${MAX_CALLS}`);
  let wav: string;
  try {
    wav = await speechWav(
      "Hello, this is a test call. Testing one two three, can you hear me clearly?",
    );
  } catch (e) {
    console.log(`echo_calls: skipped, no espeak-ng/sox (${(e as Error).message.split("\n")[0]})`);
    return [];
  }

  const variants: Variant[] = [];
  const results: LevelResult[] = [];
  try {
    for (const t of TREES) variants.push(await startVariant(t.name, t.dir));
    const snap = async (v: Variant, callersPid?: number): Promise<Snapshot> => {
      const res = await fetch(`${v.workerUrl}/stats`);
      const stats = await res.json() as WorkerStats;
      return {
        at: performance.now(),
        machine: machineTicks().busy / CLK_TCK, // what else ran during a window
        worker: cpuSeconds(v.workerPid),
        callers: callersPid ? cpuSeconds(callersPid) : undefined,
        stats,
      };
    };

    // Idle baseline: each worker's own timers, heartbeat and GC with no call (all measured over
    // the same window: they idle side by side).
    await sleep(2000);
    const i0 = await Promise.all(variants.map((v) => snap(v)));
    await sleep(WINDOW_S * 1000);
    const i1 = await Promise.all(variants.map((v) => snap(v)));
    variants.forEach((v, i) => {
      v.idle = (i1[i].worker - i0[i].worker) / ((i1[i].at - i0[i].at) / 1000);
      console.log(
        `echo_calls: worker ${v.name} idle ${(v.idle * 100).toFixed(2)}% of a core ` +
          `(${WINDOW_S} s window, CLK_TCK ${CLK_TCK})`,
      );
    });

    for (const n of LEVELS) {
      for (const v of variants) {
        const calls = [];
        for (let i = 0; i < n; i++) {
          const { endpoint, headers } = await connectSession(v.api, v.tenant);
          calls.push({ endpoint, headers });
        }
        const seconds = WARMUP_S + WINDOW_S + 60; // outlasts setup and the window; hang-up ends it
        const callers = new LineChild(
          new URL("./echo_callers.ts", import.meta.url).pathname,
          "@@echo",
        );
        callers.send(JSON.stringify({ calls, wav, seconds }));
        try {
          const ready = await callers.wait("ready", 120_000) as {
            connected: number;
            failures: string[];
            setupMs: number;
          };
          if (ready.failures.length) {
            console.log(
              `  ${n} calls: ${ready.failures.length} failed to connect:`,
              ready.failures,
            );
          }
          await sleep(WARMUP_S * 1000);
          await v.profiler?.start();
          const s0 = await snap(v, callers.child.pid);
          callers.send("mark");
          await callers.wait("marked", 10_000);
          await sleep(WINDOW_S * 1000);
          const s1 = await snap(v, callers.child.pid);
          const profile = await v.profiler?.stop();
          callers.send("stop");
          const r = await callers.wait("result", 30_000) as unknown as CallersResult;
          const result = summarize(n, ready, v.idle, s0, s1, r);
          result.variant = v.name;
          results.push(result);
          if (profile) printProfile(`${v.name}, ${n} calls`, profile);
        } catch (e) {
          // A level that breaks (e.g. overload) is reported, and the next one still runs.
          console.log(`echo_calls: ${v.name} ${n} calls failed: ${(e as Error).message}`);
        } finally {
          await callers.close();
        }
        // The next level starts on an empty node.
        await waitNoCalls([v.workerUrl], 15_000);
      }
    }
  } finally {
    for (const v of variants) await v.close();
  }
  print(results, variants);
  return results;
}

function summarize(
  n: number,
  ready: { connected: number; setupMs: number },
  idleRate: number,
  s0: Snapshot,
  s1: Snapshot,
  r: CallersResult,
): LevelResult {
  const windowS = (s1.at - s0.at) / 1000;
  const workerCpuS = s1.worker - s0.worker;
  const callersCpuS = (s1.callers ?? 0) - (s0.callers ?? 0);
  const live = s1.stats.calls;
  const late = windowLateness(s0.stats, s1.stats);
  const packets = r.calls.reduce((a, c) => a + c.packets, 0);
  const expected = r.calls.reduce((a, c) => a + c.expected, 0);
  const echoes = r.calls.map((c) => c.echoRms);
  return {
    calls: n,
    connected: ready.connected,
    setupS: ready.setupMs / 1000,
    windowS,
    workerCpuS,
    netMsPerCallSecond: live ? ((workerCpuS - idleRate * windowS) * 1000) / (live * windowS) : 0,
    netMsPerSentSecond: late.ticks
      ? ((workerCpuS - idleRate * windowS) * 1000) / (late.ticks * 0.02)
      : 0,
    workerCorePct: (workerCpuS / windowS) * 100,
    callersCorePct: (callersCpuS / windowS) * 100,
    otherCorePct: ((s1.machine - s0.machine - workerCpuS - callersCpuS) / windowS) * 100,
    pacer: { ...late, expectedTicks: Math.round((live * windowS * 1000) / 20) },
    skippedFrames: s1.stats.pacing.skipped_frames - s0.stats.pacing.skipped_frames,
    // Per-call p99s, then the worst call's and the median call's: one number per call keeps a
    // single bad call visible.
    rx: {
      p50: r.calls.length ? median(r.calls.map((c) => c.gapP99Ms)) : 0,
      p99: Math.max(0, ...r.calls.map((c) => c.gapP99Ms)),
      max: Math.max(0, ...r.calls.map((c) => c.gapMaxMs)),
      lossPct: expected ? Math.max(0, (1 - packets / expected) * 100) : 0,
    },
    callersLoopP99Ms: r.loopLateP99Ms,
    echo: {
      minRms: echoes.length ? Math.min(...echoes) : 0,
      spokenRms: r.spokenRms,
      silent: echoes.filter((e) => e < SILENCE_RMS || e < r.spokenRms * 0.2).length +
        (n - ready.connected),
    },
    rssMb: s1.stats.memory.rss_bytes / 2 ** 20,
  };
}

function print(results: LevelResult[], variants: Variant[]): void {
  const f = (x: number, d = 2) => x.toFixed(d);
  const rows = [
    [
      "worker",
      "calls",
      "worker CPU ms per call-s (net)",
      "% core per call",
      "CPU ms per s of audio sent",
      "worker % core (total)",
      "callers % core",
      "rest of machine % core",
      "pacer late p50/p99/max ms",
      "skipped frames",
      "rx gap-20ms p99 median/worst call ms",
      "rx loss",
      "echo ok",
      "worker RSS MB",
    ],
    ...results.map((r) => [
      r.variant ?? "",
      `${r.connected}/${r.calls}`,
      f(r.netMsPerCallSecond),
      f(r.netMsPerCallSecond / 10),
      f(r.netMsPerSentSecond),
      f(r.workerCorePct, 1),
      f(r.callersCorePct, 1),
      f(r.otherCorePct, 1),
      `${f(r.pacer.p50)}/${f(r.pacer.p99)}/${f(r.pacer.max, 1)}`,
      `${r.skippedFrames} (ticks ${r.pacer.ticks}/${r.pacer.expectedTicks})`,
      `${f(r.rx.p50, 1)}/${f(r.rx.p99, 1)}`,
      `${f(r.rx.lossPct, 1)}%`,
      r.echo.silent ? `FLAG ${r.echo.silent} silent` : `all (min rms ${r.echo.minRms.toFixed(0)})`,
      f(r.rssMb, 0),
    ]),
  ];
  console.log(
    `\nEcho calls, worker idle baseline ${
      variants.map((v) => `${v.name} ${f(v.idle * 100)}`).join(", ")
    }% of a core; ` +
      `window ${WINDOW_S} s after ${WARMUP_S} s warm-up; spoken rms ${
        results[0]?.echo.spokenRms.toFixed(0) ?? "-"
      }`,
  );
  console.log(markdownTable(rows));
  for (const v of variants) {
    const mine = results.filter((r) => r.variant === v.name);
    const one = mine.find((r) => r.calls === 1), most = mine[mine.length - 1];
    if (one && most && most !== one && one.netMsPerCallSecond > 0) {
      console.log(
        `${v.name}: per-call CPU at ${most.calls} calls vs 1: ${
          f(most.netMsPerCallSecond / one.netMsPerCallSecond)
        }x per call-second, ${
          f(most.netMsPerSentSecond / one.netMsPerSentSecond)
        }x per second of audio sent; callers' own loop lateness p99 ${
          mine.map((r) => `${r.calls}: ${f(r.callersLoopP99Ms, 1)} ms`).join(", ")
        }`,
      );
    }
  }
  // Same level, same run: each later tree against the first (e.g. after vs before). A level
  // listed more than once (BENCH_ECHO_LEVELS=10,10,10) pairs its runs in order, and the median
  // of the pairs' ratios is printed: the trees took turns, so the machine's other load falls
  // on both alike.
  const [base, ...others] = variants;
  for (const v of others) {
    for (const n of [...new Set(results.map((r) => r.calls))]) {
      const mine = results.filter((r) => r.variant === v.name && r.calls === n);
      const theirs = results.filter((r) => r.variant === base.name && r.calls === n);
      const pairs = mine.slice(0, theirs.length).map((r, i) => [r, theirs[i]] as const);
      if (!pairs.length) continue;
      const sum = (rs: LevelResult[], k: (r: LevelResult) => number) =>
        rs.reduce((a, r) => a + k(r), 0);
      console.log(
        `${n} calls, ${v.name} vs ${base.name} (${pairs.length} pair${
          pairs.length > 1 ? "s" : ""
        }, median ratio): CPU per call-second ${
          f(median(pairs.map(([r, b]) => r.netMsPerCallSecond / b.netMsPerCallSecond)))
        }x, per second of audio sent ${
          f(median(pairs.map(([r, b]) => r.netMsPerSentSecond / b.netMsPerSentSecond)))
        }x; skipped frames ${sum(mine, (r) => r.skippedFrames)} vs ${
          sum(theirs, (r) => r.skippedFrames)
        }; pacer p99 ${mine.map((r) => f(r.pacer.p99)).join("/")} vs ${
          theirs.map((r) => f(r.pacer.p99)).join("/")
        } ms; rest of machine ${f(median(mine.map((r) => r.otherCorePct)), 0)} / ${
          f(median(theirs.map((r) => r.otherCorePct)), 0)
        } % of a core`,
      );
    }
  }
}

if (import.meta.main) await main();
export { main };
