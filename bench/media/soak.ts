// Soak: SOAK_CALLS (10) concurrent whole calls against one worker process for SOAK_SECONDS (600),
// each slot placing one call after another (a greeting, then turns of festival speech answered by
// a brain, about 40 s a call), so both steady calls and call set-up/tear-down are soaked.
// Every SOAK_SAMPLE_SECONDS (10) it reads the worker from /proc and /metrics: RSS, its anonymous
// part and C heap (brk and glibc arenas, bench/media/mappings.ts), threads, open file descriptors
// (sockets included), JS heap, calls in progress; at the end it prints each figure's
// least-squares slope per minute after the first minute (warm-up), and the per-turn latency from
// the caller's last voiced sample sent to the first bot audio it heard, per minute, p50 and p99.
// A leak shows as a positive slope that does not fall to ~0 over the run. SOAK_WORKER_ENV passes
// settings to the worker (e.g. MEMORY_RELEASE_SECONDS=0); SOAK_HEAP_CENSUS=1 and SOAK_SETTLED=1
// probe it through its inspector (bench/media/README.md).
// Run: deno run -A bench/media/soak.ts   (also `deno task bench soak`; SOAK_SECONDS=120 for a short run)
import {
  makeTenant,
  startTestApi,
  type Tenant,
  type TestApi,
} from "../../tests/helpers/api_server.ts";
import { statusKb } from "../harness/proc.ts";
import { byKind, readMappings } from "./mappings.ts";
import { type Census, diffCensus, formatDiff, heapCensus, settle } from "./heap_census.ts";
import { Inspector } from "../harness/inspector.ts";
import { speech } from "../../tests/helpers/call_harness.ts";
import { percentile, slope } from "../harness/stats.ts";
import { markdownTable } from "../harness/table.ts";
import { startBenchWorker, workerEnvFrom } from "../harness/worker.ts";
import { dialWebCall } from "../harness/session.ts";
import { setTimeout as sleep } from "node:timers/promises";
import { LINES, replyingBrain } from "../harness/script.ts";

const CALLS = Number(Deno.env.get("SOAK_CALLS") ?? 10);
const SECONDS = Number(Deno.env.get("SOAK_SECONDS") ?? 600);
const SAMPLE_S = Number(Deno.env.get("SOAK_SAMPLE_SECONDS") ?? 10);
/** Compare the worker's JS heap by constructor between minute 2 and the end (calls torn down). */
const CENSUS = Deno.env.get("SOAK_HEAP_CENSUS") === "1";
/**
 * Once a minute, also read the worker settled: after a full GC and a release of freed malloc
 * memory (through its inspector), so the slope shows what is held, not where GC happens to be.
 */
const SETTLED = Deno.env.get("SOAK_SETTLED") === "1";
/** Extra environment for the worker, `K=V K=V` (e.g. MALLOC_ARENA_MAX=2 to compare allocators). */
const WORKER_ENV = workerEnvFrom("SOAK_WORKER_ENV");
const TURNS_PER_CALL = 5;
const ADMIN = "adm_soak_0123456789abcdef";
/** Shorter than REPLIES (harness/script.ts): the soak's figures were taken with these. */
const REPLIES = [
  "It will be sunny and warm all day.",
  "Your table for two is booked for seven tonight.",
  "Your order left the warehouse this morning.",
];

interface Sample {
  t: number;
  rssMb: number;
  /** Anonymous resident memory (heaps, arenas, WASM), without the file pages the kernel may drop. */
  anonMb: number;
  /** Resident in the C heap: brk and glibc's thread arenas (recognition decoders, onnxruntime). */
  cHeapMb: number;
  threads: number;
  fds: number;
  heapMb: number;
  calls: number;
}

async function metricValue(url: string, name: string): Promise<number> {
  const text = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } })
    .then((r) => r.text());
  const line = text.split("\n").find((l) => l.startsWith(name + " ") || l.startsWith(name + "{"));
  return line ? Number(line.slice(line.lastIndexOf(" ") + 1)) : NaN;
}

async function oneCall(
  api: TestApi,
  tenant: Tenant,
  lines: Int16Array[],
  latencies: { at: number; ms: number }[],
  until: number,
): Promise<boolean> {
  const { caller } = await dialWebCall(api, tenant);
  try {
    await caller.waitForMessage((m) => m.type === "bot-stopped-speaking", 20_000).catch(() => {});
    for (let i = 0; i < TURNS_PER_CALL && performance.now() < until; i++) {
      const before = caller.messages.length;
      const { startedAt } = await caller.say(lines[i % lines.length]);
      await caller.waitForMessage(
        (m) => caller.messages.indexOf(m) >= before && m.type === "bot-stopped-speaking",
        20_000,
      ).catch(() => {});
      // From the last voiced sample the caller sent, as the simulator and the page measure it
      // (caller/turn_latency.ts), not from the end of the clip: festival's lines end in ~320 ms
      // of quiet, which the end-of-turn window spends before say() even resolves.
      const turn = caller.frames.measure(startedAt);
      if (turn.ms !== null) latencies.push({ at: turn.speech_end!, ms: turn.ms });
      await sleep(700);
    }
    return true;
  } finally {
    await caller.hangUp();
  }
}

if (import.meta.main) {
  const brain = replyingBrain(REPLIES);
  const served = brain.serve({ hostname: "127.0.0.1", port: 0, path: "/brain" });
  const api = await startTestApi({
    RATE_LIMIT_PER_SECOND: "0",
    PENDING_SESSIONS_PER_KEY: "0",
    ADMIN_TOKEN: ADMIN,
  }, {
    node: false,
  });
  const worker = await startBenchWorker(api.db.url, {
    nodeId: "node-soak",
    env: { ADMIN_TOKEN: ADMIN, WORKER_CAPACITY: String(CALLS + 5), ...WORKER_ENV },
    inspect: CENSUS || SETTLED,
  });
  const { pid, inspectPort } = worker;
  const tenant = await makeTenant(api, "soak", { brain_url: served.url });
  const lines = await Promise.all(LINES.map((l) => speech(l)));
  const samples: Sample[] = [];
  const latencies: { at: number; ms: number }[] = [];
  let callsDone = 0, callsFailed = 0;
  const t0 = performance.now();
  const until = t0 + SECONDS * 1000;
  const sample = async () => {
    const kinds = byKind(readMappings(pid));
    samples.push({
      t: (performance.now() - t0) / 1000,
      rssMb: statusKb(pid, "VmRSS") / 1024,
      anonMb: statusKb(pid, "RssAnon") / 1024,
      cHeapMb: ((kinds.get("C heap (brk)") ?? 0) + (kinds.get("C heap (thread arenas)") ?? 0)) /
        1024,
      threads: statusKb(pid, "Threads"),
      fds: [...Deno.readDirSync(`/proc/${pid}/fd`)].length,
      heapMb: (await metricValue(worker.url, "voice_process_heap_used_bytes")) / 1e6,
      calls: await metricValue(worker.url, "voice_worker_active_calls"),
    });
  };
  await sample();
  const sampler = setInterval(() => void sample().catch(() => {}), SAMPLE_S * 1000);
  let census2: Promise<Census> | undefined;
  const censusTimer = !CENSUS ? undefined : setTimeout(() => {
    census2 = heapCensus(inspectPort!);
  }, 120_000);
  const settled: { t: number; rssMb: number }[] = [];
  const inspector = SETTLED ? await Inspector.connect(inspectPort!) : undefined;
  const readSettled = async () => {
    await settle(inspector!);
    settled.push({ t: (performance.now() - t0) / 1000, rssMb: statusKb(pid, "VmRSS") / 1024 });
  };
  const settler = inspector && setInterval(() => void readSettled().catch(() => {}), 60_000);
  console.log(`soak: ${CALLS} concurrent calls for ${SECONDS} s against one worker (pid ${pid})`);
  try {
    await Promise.all(Array.from({ length: CALLS }, async (_, slot) => {
      await sleep(slot * 500); // not in lock-step
      while (performance.now() < until) {
        try {
          await oneCall(api, tenant, lines, latencies, until);
          callsDone++;
        } catch (err) {
          callsFailed++;
          console.error(`slot ${slot}: ${(err as Error).message}`);
          await sleep(1000);
        }
      }
    }));
    await sleep(3000); // calls torn down
    await sample();
  } finally {
    clearInterval(sampler);
    clearTimeout(censusTimer);
    clearInterval(settler);
  }
  if (inspector) await readSettled();
  if (inspectPort !== undefined && census2) {
    const [a, b] = [await census2, await heapCensus(inspectPort)];
    console.log(
      `JS heap by constructor, minute 2 → the end (calls torn down): ${
        (a.totalBytes / 1e6).toFixed(1)
      } → ${(b.totalBytes / 1e6).toFixed(1)} MB; what grew most:\n${formatDiff(diffCensus(a, b))}`,
    );
  }

  const warm = samples.filter((s) => s.t >= 60);
  const perMin = (pick: (s: Sample) => number) =>
    slope(warm.map((s) => s.t / 60), warm.map(pick)).toFixed(3);
  const first = warm[0] ?? samples[0], last = samples[samples.length - 1];
  console.log(
    `calls completed ${callsDone}, failed ${callsFailed}; turns measured ${latencies.length}`,
  );
  const figures: [string, (s: Sample) => number][] = [
    ["worker RSS MB", (s: Sample) => s.rssMb],
    ["  anonymous MB", (s: Sample) => s.anonMb],
    ["  C heap MB", (s: Sample) => s.cHeapMb],
    ["JS heap MB", (s: Sample) => s.heapMb],
    ["threads", (s: Sample) => s.threads],
    ["open fds", (s: Sample) => s.fds],
  ];
  console.log(markdownTable([
    ["figure", "after 1 min", "at the end", "slope per minute (after 1 min)"],
    ...figures.map(([name, pick]) => [
      name,
      pick(first).toFixed(1),
      pick(last).toFixed(1),
      perMin(pick),
    ]),
  ]));
  if (settled.length) {
    const w = settled.filter((s) => s.t >= 60);
    console.log(
      `worker RSS settled (after a full GC and a release, once a minute): ${
        settled.map((s) => s.rssMb.toFixed(0)).join(" ")
      } MB; slope per minute after 1 min ${
        slope(w.map((s) => s.t / 60), w.map((s) => s.rssMb)).toFixed(3)
      }`,
    );
  }
  console.log(`calls in progress at the end: ${last.calls}`);
  const releases = await metricValue(worker.url, "voice_process_memory_releases_total");
  const releaseS = await metricValue(worker.url, "voice_process_memory_release_seconds_total");
  console.log(
    `freed memory given back ${releases} times, ${
      (1000 * releaseS / releases).toFixed(1)
    } ms each on average (main thread)`,
  );
  const minutes = Array.from({ length: Math.ceil(SECONDS / 60) }, (_, m) => {
    const inMin = latencies.filter((l) => l.at - t0 >= m * 60_000 && l.at - t0 < (m + 1) * 60_000)
      .map((l) => l.ms);
    return [
      String(m + 1),
      String(inMin.length),
      percentile(inMin, 50).toFixed(0),
      percentile(inMin, 99).toFixed(0),
    ];
  });
  console.log(markdownTable([["minute", "turns", "latency p50 ms", "p99 ms"], ...minutes]));

  inspector?.close();
  await worker.stop();
  await api.close();
  await served.shutdown();
}
