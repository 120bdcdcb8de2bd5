// Whole-call density: N concurrent scripted calls through the real service, with the local
// engines and, as the baseline in the same run, as echo calls (an `echo:` agent: no brain, no
// engine), at N = 1, 4, 8 and then stepping up to the largest N this machine holds.
//
// Processes: this one (the API and the brain), the worker under test (media/main.ts, a fresh one
// for every (configuration, N), so idle and peak RSS are its own; BENCH_ROOT runs another
// checkout's worker, BENCH_WORKER_ENV gives it extra settings), and one process holding every
// test caller (density_callers.ts), so the worker's /proc figures are its own.
//
// A call: bot-ready, the greeting, 3 festival lines, each answered by a fixed reply, 0.7 s pause.
// Every other call (0, 2, …) asks for a long story on its last line and, 1.5 s into it, says
// "stop please" over it (barge-in), which gets a short reply. Echo calls say the same lines and
// wait 3.5 s after each. Every call is held until all calls played their script; then the
// worker's GET /stats is read (pacing histograms of every call, merged), and the calls hang up.
//
// Each worker first serves one short call, or the level once (BENCH_DENSITY_WARMUP), unmeasured.
// Per (configuration, N), read from /proc over the tree of the worker's process (runners are its
// children when it has any):
//   - CPU: utime+stime per process and per thread (main = TID PID; "recognition"/"synthesis" by
//     thread name; other = the rest: V8/tokio/ONNX helpers and threads that exited) from just
//     before the first dial until the worker has torn every call down, minus each group's idle
//     rate measured over 4 s just before, per call-second (offer to hang-up);
//   - RSS: VmRSS idle, and the peak during the calls (VmHWM after a clear_refs reset for one
//     process; the highest 100 ms sample of the tree's sum otherwise); per call = (peak − idle)/N.
// At the caller, from audio: end of speech (the frame holding a line's last voiced sample going
// out) → first audible bot frame; barge-in stop: onset of "stop please" going out → the last
// audible bot frame before a 600 ms gap. WER: the texts the brain got in UserTurn against the
// script.
// A level holds when every call ran its script and every line was answered, skipped frames ≤
// BENCH_DENSITY_MAX_SKIPPED_PCT (0.1) % of the frames sent, and end-of-speech → first audio p99 ≤
// BENCH_DENSITY_MAX_P99_MS (1000, the issue's target).
//
// Run: deno run -A bench/media/call_density.ts   (also `deno task bench density`; ≤ ~6 min)
// Environment:
//   BENCH_DENSITY_LEVELS     "1,4,8,+" ("+": then step up by BENCH_DENSITY_STEP (4) while a level
//                            holds, and bisect between the largest that held and the smallest
//                            that did not)
//   BENCH_DENSITY_BUDGET_S   360: no level starts that would likely end past it
//   BENCH_DENSITY_CONFIGS    "echo,local"
//   BENCH_DENSITY_JSON       a path: the figures as JSON
//   BENCH_DENSITY_ARRIVAL    "lockstep" (call i dials at i × 0.3 s: every caller speaks at the same
//                            moments, the recogniser's worst case) or "spread" (at i × 6 s / N: the
//                            lines fall across a turn's period, as independent calls' do)
//   BENCH_DENSITY_PIN        "1": the worker's threads on CPU 0, this process and the callers on the
//                            others (taskset): calls per core of a worker with a core of its own
//   BENCH_DENSITY_WARMUP     "1": each fresh worker serves one short call before it is measured
//                            (JIT, pools, the recogniser's learnt prior); "level": it first serves
//                            the level's own calls once, unmeasured (the JIT of every thread at the
//                            level's steady state, as on a node that has served for a while);
//                            "0": cold
//   BENCH_DENSITY_PROFILE    "1": a V8 CPU profile of the worker's main thread over each level's
//                            calls, printed by module and function (one runner only; the
//                            profiler's own overhead inflates that level's CPU figures);
//                            "DIR": also written there as CONFIG-N.cpuprofile (Chrome DevTools)
//   BENCH_DENSITY_THREADS    "1": also print each level's CPU by thread name (gross, ms per
//                            call-second), to see what "other" is
//   BENCH_WORKER_ENV         extra worker settings, "K=V K2=V2" (e.g. "WORKER_PROCESSES=2")
//   BENCH_ROOT               the checkout whose media/main.ts runs as the worker (default: this)
//                            A configuration may name its own: "local@/tmp/before" is the local
//                            engines of /tmp/before's worker (`git worktree add /tmp/before REV`),
//                            measured in the same run as the others, e.g.
//                            BENCH_DENSITY_CONFIGS=echo,local,local@/tmp/before
import { makeTenant, startTestApi, type Tenant } from "../../tests/helpers/api_server.ts";
import { startWorkerNodeProcess } from "../../tests/helpers/process.ts";
import { setTimeout as sleep } from "node:timers/promises";
import { LatenessHistogram } from "../../media/audio/pacer.ts";
import { callerSpeechWav } from "../../tests/helpers/audio.ts";
import { createBrain } from "../../sdk/brain/mod.ts";
import { werCount } from "../../media/stt/wer.ts";
import {
  addSplit,
  CLK_TCK,
  cpuBetween,
  cpuByThreadName,
  cpuSeconds,
  type CpuSplit,
  loadAverage,
  machineTicks,
  pinSplit,
  pinTo,
  processTree,
  snapshotTree,
  sumSplits,
  zeroSplit,
} from "../harness/proc.ts";
import { LineChild } from "../harness/line_child.ts";
import { hostSpeedProbe } from "./host_speed.ts";
import { printProfile, Profiler } from "./profile.ts";
import { percentile } from "../harness/stats.ts";
import { markdownTable } from "../harness/table.ts";
import { startBenchWorker, waitNoCalls, workerEnvFrom } from "../harness/worker.ts";
import { connectSession } from "../harness/session.ts";
import { RssPeak } from "../harness/rss.ts";
import { GREETING, LINES as SCRIPT_LINES, REPLIES } from "../harness/script.ts";
import type { DensityCall, DensityCallersConfig, DensityCallersResult } from "./density_callers.ts";

/** "echo" or "local", optionally "@/checkout" whose worker to run (default BENCH_ROOT). */
type Config = string;
type Kind = "echo" | "local";
const kindOf = (c: Config): Kind => (c.split("@")[0] === "echo" ? "echo" : "local");
const START_DIR = Deno.cwd();
/** A configuration's checkout, absolute (the bench changes directory to start each worker). */
const rootOf = (c: Config): string => {
  const r = c.split("@")[1] ?? ROOT;
  return r.startsWith("/") ? r : `${START_DIR}/${r}`;
};
const env = (k: string) => Deno.env.get(k);
const LEVEL_SPEC = (env("BENCH_DENSITY_LEVELS") ?? "1,4,8,+").split(",").map((s) => s.trim());
const FIXED = LEVEL_SPEC.filter((s) => s !== "+").map(Number).filter((n) => n > 0);
const STEP_UP = LEVEL_SPEC.includes("+");
const STEP = Number(env("BENCH_DENSITY_STEP") ?? 4);
const BUDGET_S = Number(env("BENCH_DENSITY_BUDGET_S") ?? 360);
const CONFIGS: Config[] = (env("BENCH_DENSITY_CONFIGS") ?? "echo,local").split(",");
const MAX_P99_MS = Number(env("BENCH_DENSITY_MAX_P99_MS") ?? 1000);
const MAX_SKIPPED_PCT = Number(env("BENCH_DENSITY_MAX_SKIPPED_PCT") ?? 0.1);
const JSON_PATH = env("BENCH_DENSITY_JSON");
const ROOT = env("BENCH_ROOT") ?? new URL("../..", import.meta.url).pathname;
const WORKER_ENV = workerEnvFrom("BENCH_WORKER_ENV");

const IDLE_S = 4;
/** lockstep: call i dials at i × STAGGER_MS, so every caller says its lines at about the same
 * moments (the recogniser's worst case); spread: at i × SPREAD_PERIOD_MS / N, so the callers'
 * lines fall across a turn's period, as calls that arrive independently do. */
const ARRIVAL = env("BENCH_DENSITY_ARRIVAL") === "spread" ? "spread" : "lockstep";
const STAGGER_MS = 300;
/** About one turn: a line (~2.5 s), the reply's start (~0.5 s), the reply (~2.5 s), the gap. */
const SPREAD_PERIOD_MS = 6000;
/** Between two of `n` calls' dials, by the arrival chosen. */
const dialGapMs = (n: number) => (ARRIVAL === "spread" ? SPREAD_PERIOD_MS / n : STAGGER_MS);
/** What each worker serves before it is measured: nothing, one short call, or the level once. */
const WARMUP_SETTING = env("BENCH_DENSITY_WARMUP") ?? "1";
const WARMUP = WARMUP_SETTING !== "0";
const WARMUP_LEVEL = WARMUP_SETTING === "level";
/** BENCH_DENSITY_PIN=1: the worker on CPU 0, this process and the callers on the others. */
const PIN = env("BENCH_DENSITY_PIN") === "1" ? pinSplit() : null;
if (PIN && !pinTo(Deno.pid, PIN.bench)) throw new Error("BENCH_DENSITY_PIN: taskset failed");
const PROFILE_SETTING = env("BENCH_DENSITY_PROFILE") ?? "";
const PROFILE = PROFILE_SETTING !== "" && PROFILE_SETTING !== "0";
const PROFILE_DIR = PROFILE && PROFILE_SETTING !== "1" ? PROFILE_SETTING : undefined;
const SHOW_THREADS = env("BENCH_DENSITY_THREADS") === "1";
const ECHO_PAUSE_MS = 3500;
const GAP_MS = 700;
/** The first two of the shared lines; the third is the last line, or the story asked for. */
const LINES = SCRIPT_LINES.slice(0, 2);
const LAST_LINE = SCRIPT_LINES[2];
const STORY_LINE = "please tell me a long story";
const BARGE_WORDS = "stop please";
const STORY = [
  "Once upon a time, a small robot lived in a lighthouse by the sea.",
  "Every night it counted the ships that passed and wished one of them would stop.",
  "One stormy evening a fishing boat lost its way, and the robot turned its lamp toward it.",
  "The fishermen followed the light home and came back the next day to say thank you.",
];
const AFTER_BARGE = "Okay, I will stop.";

// ---- the worker under test ----

interface Worker {
  /** The process started (with runners: their supervisor, whose children they are). */
  pid: number;
  /** Each call runner's HTTP base (one, without runners). */
  urls: string[];
  /** Runner i's process id, where known (the worker's own pid without runners). */
  runnerPid(i: number): number | undefined;
  /** The main thread's profiler (BENCH_DENSITY_PROFILE, one runner only). */
  profiler?: Profiler;
  stop(): Promise<unknown>;
}

/** WORKER_PROCESSES from BENCH_WORKER_ENV, as a runner count (1 without it). */
function runnerCount(): number {
  const v = WORKER_ENV.WORKER_PROCESSES;
  if (v === undefined) return 1;
  return v === "auto" ? navigator.hardwareConcurrency : Math.max(1, Number(v) || 1);
}

async function startWorker(databaseUrl: string, root: string): Promise<Worker> {
  const w = await spawnWorker(databaseUrl, root);
  if (PIN && !processTree(w.pid).every((pid) => pinTo(pid, PIN.worker))) {
    await w.stop();
    throw new Error("BENCH_DENSITY_PIN: taskset failed");
  }
  return w;
}

async function spawnWorker(databaseUrl: string, root: string): Promise<Worker> {
  const runners = runnerCount();
  if (runners === 1) {
    const w = await startBenchWorker(databaseUrl, { root, env: WORKER_ENV, inspect: PROFILE });
    const profiler = w.inspectPort ? await Profiler.connect(w.inspectPort) : undefined;
    return {
      pid: w.pid,
      urls: [w.url],
      runnerPid: () => w.pid,
      profiler,
      stop: () => {
        profiler?.close();
        return w.stop();
      },
    };
  }
  Deno.chdir(root); // startWorkerNodeProcess spawns media/main.ts of the current directory
  const extra: Record<string, string> = {
    RECORDINGS_DIR: await Deno.makeTempDir({ prefix: "bench-recordings-" }),
    ...WORKER_ENV,
  };
  // startWorkerNodeProcess sets WORKER_PROCESSES to the count it allotted ports for.
  delete extra.WORKER_PROCESSES;
  const w = await startWorkerNodeProcess(databaseUrl, runners, undefined, extra);
  return {
    pid: w.child.process.pid,
    urls: w.runners.map((r) => r.url),
    runnerPid: (i) => w.runnerPid(i),
    stop: () => w.stop(),
  };
}

interface RunnerStats {
  calls: number;
  ticks: number;
  skipped: number;
  histogram?: LatenessHistogram;
}

/** Every runner's GET /stats (nodeStats in media/worker.ts); undefined for one that fails. */
function runnerStats(w: Worker): Promise<(RunnerStats | undefined)[]> {
  return Promise.all(w.urls.map(async (url) => {
    try {
      // deno-lint-ignore no-explicit-any
      const st: any = await (await fetch(`${url}/stats`)).json();
      const out: RunnerStats = {
        calls: st.calls,
        ticks: st.pacing?.ticks ?? 0,
        skipped: st.pacing?.skipped_frames ?? 0,
      };
      const h = st.pacing?.histogram;
      if (h) {
        const hist = new LatenessHistogram(h.bucket_ms, h.max_ms);
        for (const [i, n] of Object.entries(h.buckets as Record<string, number>)) {
          hist.counts[Number(i)] = n;
          hist.count += n;
        }
        hist.maxLateMs = st.pacing.late_ms.max;
        hist.sumMs = st.pacing.late_ms.mean * hist.count;
        out.histogram = hist;
      }
      return out;
    } catch {
      return undefined;
    }
  }));
}

/** The runners' pacing merged (percentiles from the merged histograms, never averaged). */
function mergedPacing(stats: (RunnerStats | undefined)[]): Row["pacing"] {
  const got = stats.filter((s): s is RunnerStats => s !== undefined);
  if (!got.length || got.some((s) => !s.histogram)) return undefined;
  const h = new LatenessHistogram(got[0].histogram!.bucketMs, got[0].histogram!.maxMs);
  for (const s of got) h.merge(s.histogram!);
  return {
    ticks: got.reduce((a, s) => a + s.ticks, 0),
    skipped: got.reduce((a, s) => a + s.skipped, 0),
    p50: h.quantile(0.5),
    p99: h.quantile(0.99),
    max: h.maxLateMs,
  };
}

// ---- one (configuration, N) ----

interface Runner {
  pid: number;
  /** Runner index (-1: the supervisor) and the calls it held at the end of the scripts. */
  index: number;
  calls: number;
  /** Gross CPU over the window, % of one core. */
  corePct: number;
  /** CPU net of its idle rate, ms per call-second (of all the level's calls). */
  msPerCallS: number;
  idleRssMb: number;
  peakRssMb: number;
}

export interface Row {
  config: Config;
  calls: number;
  failed: number;
  callSeconds: number;
  /** Wall time of the row, worker start to stop. */
  wallS: number;
  idleCorePct: number;
  /** Worker CPU net of idle, ms per call-second, by thread group (÷ 1000 = core per call). */
  msPerCallS: CpuSplit;
  /**
   * The same CPU per call, in seconds: unlike the rate, it does not fall when an overloaded
   * machine stretches the calls (replies late, so more call-seconds for the same work).
   */
  cpuSPerCall: number;
  /** The worker tree's gross CPU over the window, % of one core. */
  workerCorePct: number;
  /** The whole machine's busy time over the window, in cores, and the callers' share. */
  machineBusyCores: number;
  /**
   * Time the hypervisor gave this VM's CPUs to others over the window, in cores: a busy host
   * makes every figure of the row worse, so runs compare only when it is near 0.
   */
  stealCores: number;
  /** bench/media/host_speed.ts just before the level: ms per Opus frame (lower: faster host). */
  hostProbeMs: number;
  callersCorePct: number;
  idleRssMb: number;
  peakRssMb: number;
  rssPerCallMb: number;
  runners: Runner[];
  pacing?: { ticks: number; skipped: number; p50: number; p99: number; max: number };
  /** Local only: end of speech → first audible bot audio at the caller. */
  latency?: { lines: number; answered: number; p50: number; p99: number; max: number };
  barge?: { tried: number; measured: number; notOverBot: number; p50: number; max: number };
  wer?: { errors: number; words: number };
  callersLoopLateP99Ms: number;
  holds: boolean;
  why: string;
}

interface Setup {
  api: Awaited<ReturnType<typeof startTestApi>>;
  tenants: Record<Kind, Tenant>;
  wavs: Map<string, string>;
  heard: Map<string, string[]>;
  barging: Set<string>;
}

/** Sessions for `n` calls (every other one barging, unless told not to) and their callers' script. */
async function dial(
  s: Setup,
  config: Config,
  n: number,
  only: { lines?: string[]; barge?: boolean } = {},
): Promise<{ calls: DensityCall[]; scripts: { sessionId: string; reference: string[] }[] }> {
  // Every session first (the brain must know which calls barge), then the callers.
  const calls: DensityCall[] = [];
  const scripts: { sessionId: string; reference: string[] }[] = [];
  for (let i = 0; i < n; i++) {
    const session = await connectSession(s.api, s.tenants[kindOf(config)]);
    const barge = (only.barge ?? true) && i % 2 === 0 && kindOf(config) === "local";
    const lines = only.lines ?? [...LINES, barge ? STORY_LINE : LAST_LINE];
    if (barge) s.barging.add(session.sessionId);
    scripts.push({
      sessionId: session.sessionId,
      reference: barge ? [...lines, BARGE_WORDS] : lines,
    });
    calls.push({
      endpoint: session.endpoint,
      headers: session.headers,
      lines: lines.map((l) => s.wavs.get(l)!),
      barge: barge ? s.wavs.get(BARGE_WORDS) : undefined,
    });
  }
  return { calls, scripts };
}

/**
 * Plays `calls` from a callers' process of their own, call i dialling at i × staggerMs; reads
 * the worker's /stats while every call is still up, then hangs up.
 */
async function runCallers(
  worker: Worker,
  config: Config,
  calls: DensityCall[],
  staggerMs: number,
): Promise<
  { result: DensityCallersResult; stats: (RunnerStats | undefined)[]; callersCpu: number }
> {
  const callers = new LineChild(
    new URL("./density_callers.ts", import.meta.url).pathname,
    "@@density",
  );
  const callersPid = callers.pid;
  try {
    const cfg: DensityCallersConfig = {
      echo: kindOf(config) === "echo",
      calls,
      staggerMs,
      echoPauseMs: ECHO_PAUSE_MS,
      gapMs: GAP_MS,
    };
    callers.send(JSON.stringify(cfg));
    await callers.wait("scripted", 300_000);
    // Every call is still up: the worker's stats hold all of their pacers.
    const stats = await runnerStats(worker);
    const callersCpu = cpuSeconds(callersPid);
    callers.send("hangup");
    const result = await callers.wait("result", 60_000) as unknown as DensityCallersResult;
    return { result, stats, callersCpu };
  } finally {
    await callers.close();
  }
}

/** Waits (up to 10 s) until the worker has torn every call down. */
const tornDown = (worker: Worker) => waitNoCalls(worker.urls, 10_000);

async function measure(s: Setup, config: Config, n: number): Promise<Row> {
  const started = performance.now();
  const worker = await startWorker(s.api.db.url, rootOf(config));
  const root = worker.pid;
  let rss: RssPeak | undefined;
  try {
    await sleep(1500); // past start-up's last allocations and timers
    if (WARMUP) {
      // One short call first: a worker that has served calls (JIT, pools, the recogniser's
      // learnt prior) is what a node runs in its steady state; a fresh one pays those once.
      const warm = WARMUP_LEVEL
        ? await dial(s, config, n)
        : await dial(s, config, 1, { lines: [LINES[0]], barge: false });
      await runCallers(worker, config, warm.calls, dialGapMs(warm.calls.length));
      await tornDown(worker);
      await sleep(1500);
    }
    const hostProbeMs = hostSpeedProbe();
    const i0 = snapshotTree(root);
    await sleep(IDLE_S * 1000);
    const i1 = snapshotTree(root);
    const idleS = (i1.at - i0.at) / 1000;
    const idlePer = cpuBetween(i0, i1);
    const idleRate = addSplit(zeroSplit(), sumSplits(idlePer.values()), 1 / idleS);
    rss = new RssPeak(root);
    const { pids, idleSumKb: idleRssSum } = rss;

    const { calls, scripts } = await dial(s, config, n);
    await worker.profiler?.start();
    const m0 = machineTicks();
    const c0 = snapshotTree(root);
    const { result, stats, callersCpu } = await runCallers(
      worker,
      config,
      calls,
      dialGapMs(n),
    );
    await tornDown(worker); // the teardown is part of a call's cost
    const c1 = snapshotTree(root);
    const m1 = machineTicks();
    const profile = await worker.profiler?.stop();
    if (profile) {
      printProfile(`${config}, ${n} calls`, profile);
      if (PROFILE_DIR) {
        const name = `${config.replace(/[^\w.-]+/g, "_")}-${n}.cpuprofile`;
        await Deno.mkdir(PROFILE_DIR, { recursive: true });
        await Deno.writeTextFile(`${PROFILE_DIR}/${name}`, JSON.stringify(profile));
      }
    }
    const peakKb = rss.stop();
    const windowS = (c1.at - c0.at) / 1000;
    const per = cpuBetween(c0, c1);
    const gross = sumSplits(per.values());
    const net = addSplit(gross, idleRate, -windowS);
    const callSeconds = result.calls.reduce((a, c) => a + c.seconds, 0);
    if (SHOW_THREADS) printThreads(`${config} × ${n}`, cpuByThreadName(c0, c1), callSeconds);
    const msPerCallS = addSplit(zeroSplit(), net, 1000 / callSeconds);
    const indexOf = new Map(worker.urls.map((_, i) => [worker.runnerPid(i), i]));
    const runners: Runner[] = pids.length === 1 ? [] : pids.map((pid) => {
      const idle = idlePer.get(pid)?.total ?? 0;
      const gross = per.get(pid)?.total ?? 0;
      const used = gross - (idle / idleS) * windowS;
      const index = indexOf.get(pid) ?? -1;
      const calls = index >= 0 ? stats[index]?.calls ?? 0 : 0;
      return {
        pid,
        index,
        calls,
        corePct: (gross / windowS) * 100,
        // Per call-second of its own calls (their share of all call-seconds, by count).
        msPerCallS: calls ? (used * 1000) / (callSeconds * calls / n) : NaN,
        idleRssMb: (rss!.idleKb.get(pid) ?? NaN) / 1024,
        peakRssMb: rss!.peakOf(pid) / 1024,
      };
    });

    const row: Row = {
      config,
      calls: n,
      failed: result.calls.filter((c) => c.error).length,
      callSeconds,
      wallS: 0,
      idleCorePct: idleRate.total * 100,
      msPerCallS,
      cpuSPerCall: net.total / n,
      workerCorePct: (gross.total / windowS) * 100,
      machineBusyCores: (m1.busy - m0.busy) / CLK_TCK / windowS,
      stealCores: (m1.steal - m0.steal) / CLK_TCK / windowS,
      hostProbeMs,
      callersCorePct: (callersCpu / windowS) * 100,
      idleRssMb: idleRssSum / 1024,
      peakRssMb: peakKb / 1024,
      rssPerCallMb: (peakKb - idleRssSum) / 1024 / n,
      runners,
      callersLoopLateP99Ms: result.loopLateP99Ms,
      holds: false,
      why: "",
    };
    row.pacing = mergedPacing(stats);
    if (kindOf(config) === "local") {
      const lat = result.calls.flatMap((c) => c.latencyMs);
      const ok = lat.filter((x): x is number => x !== null);
      row.latency = {
        lines: n * 3,
        answered: ok.length,
        p50: percentile(ok, 50),
        p99: percentile(ok, 99),
        max: ok.length ? Math.max(...ok) : NaN,
      };
      const barges = result.calls.filter((c) => c.barge);
      const stops = barges.map((c) => c.barge!.stopMs).filter((x): x is number => x !== null);
      row.barge = {
        tried: scripts.filter((x) => s.barging.has(x.sessionId)).length,
        measured: stops.length,
        notOverBot: barges.filter((c) => !c.barge!.overBot).length,
        p50: percentile(stops, 50),
        max: stops.length ? Math.max(...stops) : NaN,
      };
      let errors = 0, words = 0;
      for (const x of scripts) {
        // All of a call's turns against all of its lines: a line split in two turns is no error.
        const c = werCount(x.reference.join(" "), (s.heard.get(x.sessionId) ?? []).join(" "));
        errors += c.errors;
        words += c.words;
      }
      row.wer = { errors, words };
    }
    const why: string[] = [];
    if (row.failed) why.push(`${row.failed} calls failed`);
    if (row.latency && row.latency.answered < row.latency.lines) {
      why.push(`${row.latency.lines - row.latency.answered} lines unanswered`);
    }
    if (row.pacing && row.pacing.skipped > (row.pacing.ticks * MAX_SKIPPED_PCT) / 100) {
      why.push(`${row.pacing.skipped} skipped frames`);
    }
    if (!row.pacing) why.push("no pacing figures from /stats");
    if (row.latency && !(row.latency.p99 <= MAX_P99_MS)) {
      why.push(`latency p99 ${row.latency.p99.toFixed(0)} ms`);
    }
    row.holds = why.length === 0;
    row.why = why.join(", ");
    for (const c of result.calls) if (c.barge?.trace) console.log(`    barge: ${c.barge.trace}`);
    const errs = result.calls.map((c) => c.error).filter(Boolean);
    if (errs.length) console.log(`    call errors: ${[...new Set(errs)].join("; ").slice(0, 500)}`);
    row.wallS = (performance.now() - started) / 1000;
    return row;
  } finally {
    rss?.stop();
    await worker.stop();
    const left = (rss?.pids ?? [root]).filter((p) => {
      try {
        return Deno.statSync(`/proc/${p}`).isDirectory;
      } catch {
        return false;
      }
    });
    if (left.length) console.log(`    worker processes still running after stop: ${left}`);
  }
}

// ---- output ----

function printThreads(level: string, byName: Map<string, number>, callSeconds: number) {
  const rows = [...byName].filter(([, s]) => s > 0).sort((a, b) => b[1] - a[1]);
  console.log(
    `  ${level}, CPU by thread (gross ms per call-second): ` +
      rows.map(([name, s]) => `${name} ${f((s * 1000) / callSeconds)}`).join(", "),
  );
}

const f = (x: number | undefined, d = 1) =>
  x !== undefined && Number.isFinite(x) ? x.toFixed(d) : "-";

function oneLine(r: Row): string {
  const m = r.msPerCallS;
  const parts = [
    `${r.config} × ${r.calls}: CPU ${f(m.total)} ms/call-s (${f(m.total / 1000, 3)} core/call; ` +
    `main ${f(m.main)}, recognition ${f(m.recognition)}, synthesis ${f(m.synthesis)}, ` +
    `other ${f(m.other)}; ${f(r.cpuSPerCall, 2)} CPU-s per call)`,
    `RSS idle ${f(r.idleRssMb, 0)} MB, +${f(r.rssPerCallMb)} MB/call`,
    `host steal ${f(r.stealCores, 2)} cores, probe ${f(r.hostProbeMs, 3)} ms`,
    r.pacing
      ? `skipped ${r.pacing.skipped}/${r.pacing.ticks}, late p50/p99 ${f(r.pacing.p50, 2)}/` +
        f(r.pacing.p99, 2) + " ms"
      : "no /stats pacing",
  ];
  if (r.latency) {
    parts.push(
      `latency p50/p99 ${f(r.latency.p50, 0)}/${f(r.latency.p99, 0)} ms ` +
        `(${r.latency.answered}/${r.latency.lines})`,
    );
  }
  if (r.barge) {
    parts.push(
      `barge stop p50/max ${f(r.barge.p50, 0)}/${f(r.barge.max, 0)} ms ` +
        `(${r.barge.measured}/${r.barge.tried})`,
    );
  }
  if (r.wer) parts.push(`WER ${f((100 * r.wer.errors) / r.wer.words)} %`);
  parts.push(`${r.holds ? "holds" : `does not hold: ${r.why}`} (${f(r.wallS, 0)} s)`);
  return `  ${parts.join("; ")}`;
}

function table(rows: Row[]): void {
  const base = (r: Row) =>
    rows.find((b) => b.config === "echo" && b.calls === r.calls) ??
      rows.find((b) => kindOf(b.config) === "echo" && b.calls === r.calls);
  const ratio = (x: number, b: number | undefined) =>
    b !== undefined && b > 0 && Number.isFinite(x) ? `${(x / b).toFixed(2)}×` : "-";
  const t = [
    [
      "config",
      "N",
      "s/call",
      "CPU ms/call-s",
      "core/call",
      "CPU-s/call",
      "main",
      "recog",
      "synth",
      "other",
      "vs echo",
      "worker %core",
      "machine cores",
      "idle RSS MB",
      "MB/call",
      "vs echo",
      "skipped",
      "late p50/p99 ms",
      "EoS→audio p50/p99 ms",
      "barge stop p50/max ms",
      "WER %",
      "holds",
    ],
    ...rows.map((r) => [
      r.config,
      String(r.calls),
      f(r.callSeconds / r.calls, 0),
      f(r.msPerCallS.total),
      f(r.msPerCallS.total / 1000, 3),
      f(r.cpuSPerCall, 2),
      f(r.msPerCallS.main),
      f(r.msPerCallS.recognition),
      f(r.msPerCallS.synthesis),
      f(r.msPerCallS.other),
      ratio(r.msPerCallS.total, base(r)?.msPerCallS.total),
      f(r.workerCorePct, 0),
      f(r.machineBusyCores, 2),
      f(r.idleRssMb, 0),
      f(r.rssPerCallMb),
      ratio(r.rssPerCallMb, base(r)?.rssPerCallMb),
      r.pacing ? `${r.pacing.skipped}/${r.pacing.ticks}` : "-",
      r.pacing ? `${f(r.pacing.p50, 2)}/${f(r.pacing.p99, 2)}` : "-",
      r.latency
        ? `${f(r.latency.p50, 0)}/${f(r.latency.p99, 0)} (${r.latency.answered}/${r.latency.lines})`
        : "-",
      r.barge ? `${f(r.barge.p50, 0)}/${f(r.barge.max, 0)} (${r.barge.measured})` : "-",
      r.wer ? f((100 * r.wer.errors) / r.wer.words) : "-",
      r.holds ? "yes" : "no",
    ]),
  ];
  console.log(markdownTable(t));
  for (const r of rows.filter((r) => r.runners.length)) {
    console.log(
      `  ${r.config} × ${r.calls} per process (root first): ` +
        r.runners.map((x) =>
          `${x.index < 0 ? "supervisor" : `runner ${x.index}`} (pid ${x.pid}): ${x.calls} calls, ` +
          `${f(x.corePct, 0)} % core, ${f(x.msPerCallS)} ms/call-s, idle ${
            f(x.idleRssMb, 0)
          } MB, ` +
          `peak ${f(x.peakRssMb, 0)} MB`
        ).join("; "),
    );
  }
}

// ---- the run ----

async function main(): Promise<void> {
  const began = performance.now();
  const cores = navigator.hardwareConcurrency;
  console.log(
    `call_density: ${cores} cores shared by the worker, the callers' process and this one (API, ` +
      `brain); CLK_TCK ${CLK_TCK}; load average ${loadAverage()}; workers: ` +
      CONFIGS.map((c) => `${c.split("@")[0]} from ${rootOf(c)}`).join(", ") +
      (Object.keys(WORKER_ENV).length ? ` with ${JSON.stringify(WORKER_ENV)}` : "") +
      `; arrival ${ARRIVAL}; ${
        WARMUP_LEVEL
          ? "each worker warmed by one unmeasured run of the level"
          : WARMUP
          ? "each worker warmed by one call"
          : "cold workers"
      }` +
      (PIN ? `; worker pinned to CPU ${PIN.worker}, the rest to ${PIN.bench}` : ""),
  );
  const wavs = new Map<string, string>();
  try {
    for (const l of [...LINES, LAST_LINE, STORY_LINE, BARGE_WORDS]) {
      wavs.set(l, await callerSpeechWav(l, 0.05));
    }
  } catch (e) {
    console.log(`call_density: skipped, no festival/sox (${(e as Error).message.split("\n")[0]})`);
    return;
  }
  const heard = new Map<string, string[]>();
  const barging = new Set<string>();
  const brain = createBrain({
    onSessionStart: () => GREETING,
    async *onTurn(turn, session) {
      const got = heard.get(session.id) ?? [];
      got.push(turn.text);
      heard.set(session.id, got);
      const k = got.length - 1;
      if (barging.has(session.id) && k === 2) {
        for (const sentence of STORY) {
          if (turn.signal.aborted) return; // the caller interrupted
          yield sentence;
        }
        return;
      }
      yield k < REPLIES.length ? REPLIES[k] : AFTER_BARGE;
    },
  });
  const served = brain.serve({ hostname: "127.0.0.1", port: 0, path: "/brain" });
  const api = await startTestApi({ RATE_LIMIT_PER_SECOND: "0", PENDING_SESSIONS_PER_KEY: "0" }, {
    node: false,
  });
  const rows: Row[] = [];
  const held = new Map<number, boolean>();
  let lastLevelS = 0, lastN = 1;
  try {
    const setup: Setup = {
      api,
      tenants: {
        local: await makeTenant(api, "bench", { brain_url: served.url }),
        echo: await makeTenant(api, "bench-echo", { brain_url: "echo:" }),
      },
      wavs,
      heard,
      barging,
    };
    const runLevel = async (n: number): Promise<boolean> => {
      const elapsed = (performance.now() - began) / 1000;
      // A level's time grows with N (the stagger, a busier machine): scale the last one's.
      const estimate = lastLevelS * 1.1 * Math.sqrt(Math.max(1, n / lastN));
      if (rows.length && elapsed + estimate > BUDGET_S) {
        console.log(`  N = ${n}: not run, it would end past the ${BUDGET_S} s budget`);
        return false;
      }
      const t0 = performance.now();
      let holds = true;
      for (const config of CONFIGS) {
        try {
          const row = await measure(setup, config, n);
          rows.push(row);
          console.log(oneLine(row));
          // A level holds by the configuration under test (the first local one).
          const judged = CONFIGS.find((c) => kindOf(c) === "local") ?? CONFIGS[0];
          if (config === judged) holds &&= row.holds;
        } catch (e) {
          console.log(`  ${config} × ${n}: FAILED: ${(e as Error).message.slice(0, 1500)}`);
          holds = false;
        }
      }
      held.set(n, holds);
      lastLevelS = (performance.now() - t0) / 1000;
      lastN = n;
      return true;
    };
    for (const n of FIXED) {
      if (!await runLevel(n)) break;
    }
    while (STEP_UP && held.size) {
      const ok = [...held].filter(([, h]) => h).map(([n]) => n);
      const best = ok.length ? Math.max(...ok) : 0;
      const over = [...held].filter(([n, h]) => !h && n > best).map(([n]) => n);
      const next = over.length ? Math.floor((best + Math.min(...over)) / 2) : best + STEP;
      if (best === 0 || next <= best || held.has(next)) break;
      if (!await runLevel(next)) break;
    }
  } finally {
    await api.close();
    await served.shutdown();
  }
  const ok = [...held].filter(([, h]) => h).map(([n]) => n);
  const largest = ok.length ? Math.max(...ok) : 0;
  console.log(
    `\nwhole calls, local engines vs echo (${cores} cores shared by worker, callers, API and ` +
      `brain; load average after ${loadAverage()}; ${f((performance.now() - began) / 1000, 0)} s):`,
  );
  table(rows);
  console.log(
    `CPU is the worker's (its process tree), net of its idle rate, per call-second; core/call = ` +
      `CPU ms/call-s ÷ 1000. "other" = V8/tokio/ONNX helper threads and exited threads. When ` +
      `replies come late the calls stretch (s/call grows) and the per-second rate falls with ` +
      `no less work done: compare CPU-s/call across levels and runs.\n` +
      `A level holds with no failed call, every line answered, skipped ≤ ${MAX_SKIPPED_PCT} % of ` +
      `frames and end-of-speech → first audio p99 ≤ ${MAX_P99_MS} ms. Largest N held: ` +
      `${largest || "none"} (levels tried: ${[...held.keys()].join(", ")}).`,
  );
  if (JSON_PATH) {
    await Deno.writeTextFile(
      JSON_PATH,
      JSON.stringify(
        {
          machine: { cores, clk_tck: CLK_TCK, load_after: loadAverage() },
          worker: { root: ROOT, env: WORKER_ENV, configs: CONFIGS, warmup: WARMUP_SETTING },
          arrival: ARRIVAL,
          pinned: PIN,
          thresholds: { max_p99_ms: MAX_P99_MS, max_skipped_pct: MAX_SKIPPED_PCT },
          largest_n_held: largest,
          rows,
        },
        null,
        2,
      ) + "\n",
    );
    console.log(`figures written to ${JSON_PATH}`);
  }
}

if (import.meta.main) await main();
