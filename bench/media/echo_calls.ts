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
// (default 12), BENCH_ECHO_WARMUP_S (default 3).
import postgres from "postgres";
import { openDatabase } from "../../db/client.ts";
import { randomBase62 } from "../../common/ids.ts";
import { LatenessHistogram } from "../../media/audio/pacer.ts";
import { makeTenant, startTestApi } from "../../tests/helpers/api_server.ts";
import { startWorkerProcess } from "../../tests/helpers/process.ts";
import { speechWav } from "../../tests/helpers/audio.ts";
import type { CallersResult } from "./echo_callers.ts";
import { CLK_TCK, cpuSeconds } from "./proc.ts";

const ADMIN_URL = Deno.env.get("BENCH_DATABASE_URL") ??
  "postgres://postgres@127.0.0.1:5432/postgres";
const LEVELS = (Deno.env.get("BENCH_ECHO_LEVELS") ?? "1,10,50").split(",").map(Number);
const WINDOW_S = Number(Deno.env.get("BENCH_ECHO_WINDOW_S") ?? 12);
const WARMUP_S = Number(Deno.env.get("BENCH_ECHO_WARMUP_S") ?? 3);
/** Echo RMS below this is silence (the test's silent stream decodes to ~0). */
const SILENCE_RMS = 50;
const MAX_CALLS = 200;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---- process CPU from /proc ----

/** Busy CPU seconds of the whole machine (all cores): what else ran during a window. */
function machineBusySeconds(): number {
  const [cpu] = Deno.readTextFileSync("/proc/stat").split("\n");
  const t = cpu.trim().split(/\s+/).slice(1).map(Number);
  const total = t.slice(0, 8).reduce((a, b) => a + b, 0);
  return (total - t[3] - t[4]) / CLK_TCK; // minus idle and iowait
}

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

// ---- the callers process ----

class CallersProcess {
  readonly child: Deno.ChildProcess;
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #waiting: { type: string; resolve: (m: Record<string, unknown>) => void }[] = [];
  #stderr = "";
  #exited = false;

  constructor(config: unknown) {
    this.child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", new URL("./echo_callers.ts", import.meta.url).pathname],
      env: { NO_COLOR: "1" },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.#writer = this.child.stdin.getWriter();
    this.send(JSON.stringify(config));
    this.#read();
    const dec = new TextDecoder();
    this.child.stderr.pipeTo(
      new WritableStream({
        write: (c) => void (this.#stderr = (this.#stderr + dec.decode(c)).slice(-4000)),
      }),
    );
    this.child.status.then(() => (this.#exited = true));
  }

  send(line: string): void {
    this.#writer.write(new TextEncoder().encode(line + "\n")).catch(() => {});
  }

  /** The next `@@echo` message of this type, or an error with the child's stderr. */
  wait(type: string, ms: number): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`callers: no ${type} within ${ms} ms; stderr:\n${this.#stderr}`));
      }, ms);
      this.#waiting.push({
        type,
        resolve: (m) => {
          clearTimeout(timer);
          resolve(m);
        },
      });
    });
  }

  async close(): Promise<void> {
    await this.#writer.close().catch(() => {});
    if (!this.#exited) {
      const t = setTimeout(() => this.child.kill("SIGKILL"), 10_000);
      await this.child.status;
      clearTimeout(t);
    }
  }

  async #read(): Promise<void> {
    const dec = new TextDecoder();
    let buf = "";
    for await (const chunk of this.child.stdout) {
      buf += dec.decode(chunk, { stream: true });
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (!line.startsWith("@@echo ")) continue;
        const msg = JSON.parse(line.slice(7));
        const i = this.#waiting.findIndex((w) => w.type === msg.type);
        if (i >= 0) this.#waiting.splice(i, 1)[0].resolve(msg);
      }
    }
  }
}

// ---- one level ----

export interface LevelResult {
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

async function main(): Promise<LevelResult[]> {
  Deno.chdir(new URL("../..", import.meta.url)); // the worker is spawned as media/main.ts
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

  const name = `bench_echo_${randomBase62(10).toLowerCase()}`;
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const db = await openDatabase({ url: url.toString(), max: 4 });
  const api = await startTestApi({
    RATE_LIMIT_PER_SECOND: "1000",
    RATE_LIMIT_BURST: "1000",
    PENDING_SESSIONS_PER_KEY: "0",
  }, {
    db,
    node: false,
  });
  const worker = await startWorkerProcess(db.url, undefined, {
    WORKER_CAPACITY: String(MAX_CALLS),
  });
  const workerPid = worker.child.process.pid;
  const results: LevelResult[] = [];
  let idle = 0;
  try {
    const tenant = await makeTenant(api, "bench", { brain_url: "echo:" });
    const snap = async (callersPid?: number): Promise<Snapshot> => {
      const res = await fetch(`${worker.url}/stats`);
      const stats = await res.json() as WorkerStats;
      return {
        at: performance.now(),
        machine: machineBusySeconds(),
        worker: cpuSeconds(workerPid),
        callers: callersPid ? cpuSeconds(callersPid) : undefined,
        stats,
      };
    };

    // Idle baseline: the worker's own timers, heartbeat and GC with no call.
    await sleep(2000);
    const i0 = await snap();
    await sleep(WINDOW_S * 1000);
    const i1 = await snap();
    idle = (i1.worker - i0.worker) / ((i1.at - i0.at) / 1000);
    console.log(
      `echo_calls: worker idle ${(idle * 100).toFixed(2)}% of a core ` +
        `(${WINDOW_S} s window, CLK_TCK ${CLK_TCK}); rest of the machine ${
          ((i1.machine - i0.machine - (i1.worker - i0.worker)) / ((i1.at - i0.at) / 1e5)).toFixed(1)
        }% of a core`,
    );

    for (const n of LEVELS) {
      const calls = [];
      for (let i = 0; i < n; i++) {
        const r = await api.post(
          "/api/v1/sessions.connect",
          { agent_id: tenant.agent_id },
          tenant.sk,
        );
        if (r.status !== 200) throw new Error(`sessions.connect: ${JSON.stringify(r.body)}`);
        calls.push(r.body.webrtc_request_params);
      }
      const seconds = WARMUP_S + WINDOW_S + 60; // outlasts setup and the window; hang-up ends it
      const callers = new CallersProcess({ calls, wav, seconds });
      try {
        const ready = await callers.wait("ready", 120_000) as {
          connected: number;
          failures: string[];
          setupMs: number;
        };
        if (ready.failures.length) {
          console.log(`  ${n} calls: ${ready.failures.length} failed to connect:`, ready.failures);
        }
        await sleep(WARMUP_S * 1000);
        const s0 = await snap(callers.child.pid);
        callers.send("mark");
        await callers.wait("marked", 10_000);
        await sleep(WINDOW_S * 1000);
        const s1 = await snap(callers.child.pid);
        callers.send("stop");
        const r = await callers.wait("result", 30_000) as unknown as CallersResult;
        results.push(summarize(n, ready, idle, s0, s1, r));
      } catch (e) {
        // A level that breaks (e.g. overload) is reported, and the next one still runs.
        console.log(`echo_calls: ${n} calls failed: ${(e as Error).message}`);
      } finally {
        await callers.close();
      }
      // The next level starts on an empty node.
      const until = Date.now() + 15_000;
      while (Date.now() < until && (await snap()).stats.calls > 0) await sleep(200);
    }
  } finally {
    await worker.stop();
    await api.close();
    await db.close();
    await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
  print(results, idle);
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
  const p = (xs: number[], q: number) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : 0;
  };
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
      p50: p(r.calls.map((c) => c.gapP99Ms), 0.5),
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

function print(results: LevelResult[], idle: number): void {
  const f = (x: number, d = 2) => x.toFixed(d);
  const rows = [
    [
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
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i])).join(" | ")} |`;
  console.log(
    `\nEcho calls, worker idle baseline ${f(idle * 100)}% of a core; ` +
      `window ${WINDOW_S} s after ${WARMUP_S} s warm-up; spoken rms ${
        results[0]?.echo.spokenRms.toFixed(0) ?? "-"
      }`,
  );
  console.log(line(rows[0]));
  console.log(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`);
  for (const r of rows.slice(1)) console.log(line(r));
  const one = results.find((r) => r.calls === 1), most = results[results.length - 1];
  if (one && most && most !== one && one.netMsPerCallSecond > 0) {
    console.log(
      `per-call CPU at ${most.calls} calls vs 1: ${
        f(most.netMsPerCallSecond / one.netMsPerCallSecond)
      }x per call-second, ${
        f(most.netMsPerSentSecond / one.netMsPerSentSecond)
      }x per second of audio sent; callers' own loop lateness p99 ${
        results.map((r) => `${r.calls}: ${f(r.callersLoopP99Ms, 1)} ms`).join(", ")
      }`,
    );
  }
}

if (import.meta.main) await main();
export { main };
