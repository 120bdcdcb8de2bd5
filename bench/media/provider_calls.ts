// The density a production node gets when recognition and synthesis run at the provider: worker
// CPU per call-second and worker memory per call for whole scripted calls, in three
// configurations measured in the same run:
//   echo      an `echo:` agent (no brain, no speech engine): the media plane alone, the baseline;
//   local     the local engines (pocketsphinx + espeak-ng threads inside the worker);
//   provider  Sarvam recognition and synthesis ("sarvam-saaras" + "sarvam-bulbul"), each a FAKE
//             on loopback in THIS process (tests/fakes/), so the recognising and synthesising is
//             not charged to the worker, as with a real provider; the worker still streams audio
//             to it (base64 JSON over a WebSocket) and resamples and paces what comes back.
// Each (configuration, N) gets a fresh worker process (so idle and peak RSS are its own), N = 1
// and 4 concurrent calls. A call: bot-ready, the greeting, then 3 turns of festival speech, each
// answered by a fixed one- or two-sentence reply (the same text whatever was recognised, so both
// engine configurations synthesise the same characters); echo calls say the same lines and wait.
// Read from /proc (CLK_TCK from getconf):
//   - CPU: utime+stime of the worker (all threads, exited ones included) and of its main thread
//     (/proc/PID/task/PID/stat) from just before the first dial until the worker has torn every
//     call down, minus the idle rate measured just before, divided by the calls' total seconds;
//   - RSS: VmRSS idle before the calls, and the peak during them (VmHWM after resetting it with
//     /proc/PID/clear_refs, or the highest 100 ms sample if that is refused); per call = (peak −
//     idle) / N.
// Run: deno run -A bench/media/provider_calls.ts   (also `deno task bench provider`; ~3.5 min)
// Environment: BENCH_PROVIDER_LEVELS (default "1,4"), BENCH_PROVIDER_CONFIGS (default
// "echo,local,provider").
import {
  makeTenant,
  startTestApi,
  type Tenant,
  type TestApi,
} from "../../tests/helpers/api_server.ts";
import { speech } from "../../tests/helpers/call_harness.ts";
import { startFakeSarvamStt } from "../../tests/fakes/sarvam_stt.ts";
import { startFakeSarvamTts } from "../../tests/fakes/sarvam_tts.ts";
import { LINES, replyingBrain } from "../harness/script.ts";
import { parseSpeechConfig } from "../../media/engines/speech_config.ts";
import { CLK_TCK, loadAverage, statCpu } from "../harness/proc.ts";
import { RssPeak } from "../harness/rss.ts";
import { markdownTable } from "../harness/table.ts";
import { startBenchWorker, waitNoCalls } from "../harness/worker.ts";
import { dialWebCall } from "../harness/session.ts";
import { setTimeout as sleep } from "node:timers/promises";

const LEVELS = (Deno.env.get("BENCH_PROVIDER_LEVELS") ?? "1,4").split(",").map(Number);
type Config = "echo" | "local" | "provider";
const CONFIGS = (Deno.env.get("BENCH_PROVIDER_CONFIGS") ?? "echo,local,provider")
  .split(",") as Config[];
const IDLE_S = 4;
/** Echo calls have no reply: after each line they wait about as long as a reply lasts. */
const ECHO_PAUSE_MS = 3500;
const GAP_MS = 700;

// ---- /proc ----

interface Cpu {
  at: number;
  total: number;
  main: number;
}

function cpu(pid: number): Cpu {
  return {
    at: performance.now(),
    total: statCpu(`/proc/${pid}/stat`),
    main: statCpu(`/proc/${pid}/task/${pid}/stat`),
  };
}

/** CPU of the worker's live threads grouped by name (exited threads are not in /proc). */
function threadsByName(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const t of Deno.readDirSync(`/proc/${pid}/task`)) {
    try {
      const name = Deno.readTextFileSync(`/proc/${pid}/task/${t.name}/comm`).trim()
        .replace(/[-\d]+$/, "");
      const key = t.name === String(pid) ? "main" : name;
      out.set(key, (out.get(key) ?? 0) + statCpu(`/proc/${pid}/task/${t.name}/stat`));
    } catch { /* the thread exited */ }
  }
  return out;
}

// ---- one call ----

interface CallResult {
  seconds: number;
  turns: number;
  answered: number;
  sessionId: string;
}

async function runCall(
  api: TestApi,
  tenant: Tenant,
  echo: boolean,
  lines: Int16Array[],
): Promise<CallResult> {
  const t0 = performance.now();
  const { caller, sessionId: id } = await dialWebCall(api, tenant);
  let answered = 0;
  try {
    if (!echo) {
      await caller.waitForMessage((m) => m.type === "bot-stopped-speaking", 20_000)
        .catch(() => {});
    }
    for (const pcm of lines) {
      const before = caller.messages.length;
      await caller.say(pcm);
      if (echo) {
        await sleep(ECHO_PAUSE_MS);
      } else {
        const done = await caller.waitForMessage(
          (m) => caller.messages.indexOf(m) >= before && m.type === "bot-stopped-speaking",
          20_000,
        ).then(() => true, () => false);
        if (done) answered++;
      }
      await sleep(GAP_MS);
    }
  } finally {
    await caller.hangUp();
  }
  return { seconds: (performance.now() - t0) / 1000, turns: lines.length, answered, sessionId: id };
}

// ---- one (configuration, N) ----

interface Row {
  config: Config;
  calls: number;
  callSeconds: number;
  answered: string;
  idleCorePct: number;
  /** Worker CPU net of its idle rate, ms per call-second: all threads, main thread, the rest. */
  msPerCallS: { total: number; main: number; other: number };
  workerCorePct: number;
  idleRssMb: number;
  peakRssMb: number;
  rssPerCallMb: number;
  engines: string;
  threads: string;
}

interface Env {
  api: TestApi;
  brainTenant: Tenant;
  echoTenant: Tenant;
  lines: Int16Array[];
  workerEnv: (c: Config) => Record<string, string>;
}

async function measure(env: Env, config: Config, n: number): Promise<Row> {
  const worker = await startBenchWorker(env.api.db.url, { env: env.workerEnv(config) });
  const pid = worker.pid;
  try {
    await sleep(1500); // past start-up's last allocations and timers
    const i0 = cpu(pid);
    await sleep(IDLE_S * 1000);
    const i1 = cpu(pid);
    const idleRate = (i1.total - i0.total) / ((i1.at - i0.at) / 1000);
    const idleMainRate = (i1.main - i0.main) / ((i1.at - i0.at) / 1000);
    const rss = new RssPeak(pid);
    const idleRss = rss.idleSumKb;
    const t0 = threadsByName(pid);
    const c0 = cpu(pid);
    const tenant = config === "echo" ? env.echoTenant : env.brainTenant;
    const results = await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        await sleep(i * 300); // not in lock-step
        return runCall(env.api, tenant, config === "echo", env.lines);
      }),
    );
    // Until the worker has torn every call down (its share of a call's cost).
    await waitNoCalls([worker.url], 10_000);
    const c1 = cpu(pid);
    const t1 = threadsByName(pid);
    const peakRss = rss.stop();
    const windowS = (c1.at - c0.at) / 1000;
    const callSeconds = results.reduce((a, r) => a + r.seconds, 0);
    const total = ((c1.total - c0.total - idleRate * windowS) * 1000) / callSeconds;
    const main = ((c1.main - c0.main - idleMainRate * windowS) * 1000) / callSeconds;
    const threads = [...t1].map(([k, v]) => [k, v - (t0.get(k) ?? 0)] as const)
      .filter(([k, v]) => k !== "main" && v > 0)
      .sort((a, b) => b[1] - a[1]).slice(0, 4)
      .map(([k, v]) => `${k} ${((v * 1000) / callSeconds).toFixed(1)}`).join(", ");
    let engines = "-";
    if (config !== "echo") {
      const rec = await env.api.admin("/api/v1/sessions.get", {
        session_id: results[0].sessionId,
      });
      const t = (rec.body.timings?.turns ?? []).find((t: { trigger: string }) =>
        t.trigger === "speech"
      );
      if (t?.engines) {
        engines = `${t.engines.recognition} + ${(t.engines.synthesis ?? []).join(" ")}`;
      }
    }
    return {
      config,
      calls: n,
      callSeconds,
      answered: config === "echo"
        ? "-"
        : `${results.reduce((a, r) => a + r.answered, 0)}/${n * env.lines.length}`,
      idleCorePct: idleRate * 100,
      msPerCallS: { total, main, other: total - main },
      workerCorePct: ((c1.total - c0.total) / windowS) * 100,
      idleRssMb: idleRss / 1024,
      peakRssMb: peakRss / 1024,
      rssPerCallMb: (peakRss - idleRss) / 1024 / n,
      engines,
      threads,
    };
  } finally {
    await worker.stop();
  }
}

// ---- the run ----

function print(rows: Row[]): void {
  const f = (x: number, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : "-");
  const base = (r: Row) => rows.find((b) => b.config === "echo" && b.calls === r.calls);
  const ratio = (x: number, b: number | undefined) =>
    b !== undefined && b > 0 ? `${(x / b).toFixed(2)}×` : "-";
  const table = [
    [
      "config",
      "calls",
      "call-s",
      "replies",
      "CPU ms/call-s",
      "main thread",
      "other threads",
      "vs echo",
      "worker % core",
      "idle RSS MB",
      "peak RSS MB",
      "RSS MB/call",
      "vs echo",
      "engines (first speech turn)",
    ],
    ...rows.map((r) => [
      r.config,
      String(r.calls),
      f(r.callSeconds, 0),
      r.answered,
      f(r.msPerCallS.total),
      f(r.msPerCallS.main),
      f(r.msPerCallS.other),
      ratio(r.msPerCallS.total, base(r)?.msPerCallS.total),
      f(r.workerCorePct),
      f(r.idleRssMb, 0),
      f(r.peakRssMb, 0),
      f(r.rssPerCallMb),
      ratio(r.rssPerCallMb, base(r)?.rssPerCallMb),
      r.engines,
    ]),
  ];
  console.log(markdownTable(table));
  console.log(
    "\nidle worker (% of a core, before each row's calls): " +
      rows.map((r) => `${r.config}/${r.calls} ${f(r.idleCorePct, 2)}`).join(", "),
  );
  console.log("other threads by name, ms per call-second (live threads only):");
  for (const r of rows) console.log(`  ${r.config}/${r.calls}: ${r.threads || "-"}`);
  // The one-time cost of a first call (JIT, WASM instances, pools) sits in N=1's peak; the
  // difference between the two levels is what one more call adds.
  const lo = Math.min(...LEVELS), hi = Math.max(...LEVELS);
  if (lo !== hi) {
    const marginal = CONFIGS.map((c) => {
      const a = rows.find((r) => r.config === c && r.calls === lo);
      const b = rows.find((r) => r.config === c && r.calls === hi);
      return a && b
        ? `${c} ${f(((b.peakRssMb - b.idleRssMb) - (a.peakRssMb - a.idleRssMb)) / (hi - lo))}`
        : `${c} -`;
    });
    console.log(`RSS MB per extra call between ${lo} and ${hi} calls: ${marginal.join(", ")}`);
  }
}

async function main(): Promise<void> {
  console.log(
    `provider_calls: CLK_TCK ${CLK_TCK}, ${navigator.hardwareConcurrency} cores, ` +
      `load average ${loadAverage()}`,
  );
  let lines: Int16Array[];
  try {
    lines = await Promise.all(LINES.map((l) => speech(l)));
  } catch (e) {
    console.log(
      `provider_calls: skipped, no festival/sox (${(e as Error).message.split("\n")[0]})`,
    );
    return;
  }
  const stt = startFakeSarvamStt({
    apiKey: "test-key",
    transcripts: Array.from({ length: 500 }, (_, i) => LINES[i % LINES.length]),
  });
  const tts = startFakeSarvamTts({ apiKey: "test-key", msPerChar: 70 });
  const providerEnv = {
    SARVAM_API_KEY: "test-key",
    SPEECH_ENGINES: JSON.stringify({
      options: { "sarvam-saaras": { url: stt.url }, "sarvam-bulbul": { url: tts.url } },
    }),
  };
  let configs = CONFIGS;
  try {
    // The worker would exit at start-up with the same error; say it here, at once.
    parseSpeechConfig(
      JSON.parse(providerEnv.SPEECH_ENGINES),
      (n) => (providerEnv as Record<string, string>)[n],
    );
  } catch (e) {
    console.log(`provider_calls: provider configuration skipped: ${(e as Error).message}`);
    configs = configs.filter((c) => c !== "provider");
  }

  const brain = replyingBrain();
  const served = brain.serve({ hostname: "127.0.0.1", port: 0, path: "/brain" });
  const api = await startTestApi({ RATE_LIMIT_PER_SECOND: "0", PENDING_SESSIONS_PER_KEY: "0" }, {
    node: false,
  });
  const rows: Row[] = [];
  try {
    const env: Env = {
      api,
      brainTenant: await makeTenant(api, "bench", { brain_url: served.url }),
      echoTenant: await makeTenant(api, "bench-echo", { brain_url: "echo:" }),
      lines,
      workerEnv: (c) => (c === "provider" ? providerEnv : {}),
    };
    for (const n of LEVELS) {
      for (const config of configs) {
        const started = performance.now();
        try {
          const row = await measure(env, config, n);
          rows.push(row);
          console.log(
            `  ${config} × ${n}: ${row.msPerCallS.total.toFixed(1)} ms CPU per call-s, ` +
              `${row.rssPerCallMb.toFixed(1)} MB per call, replies ${row.answered} ` +
              `(${((performance.now() - started) / 1000).toFixed(0)} s)`,
          );
        } catch (e) {
          console.log(`  ${config} × ${n}: FAILED: ${(e as Error).message.slice(0, 2000)}`);
        }
      }
    }
  } finally {
    await api.close();
    await served.shutdown();
    await stt.close();
    await tts.close();
  }
  console.log(
    `\nprovider fakes served ${stt.utterances} utterances and ${tts.received.length} synthesis ` +
      `connections; load average after ${loadAverage()}\n`,
  );
  print(rows);
  if (stt.violations.length) {
    console.log(`fake STT protocol violations: ${stt.violations.join("; ")}`);
  }
}

if (import.meta.main) await main();
