// sessions.connect against a real PostgreSQL, next to a bare Hono route measured in the same run.
// Run: deno run -A bench/connect.ts  (or `deno task bench`)
//
// The API runs in its own process (bench/connect_server.ts); this process only generates load,
// over keep-alive HTTP on 127.0.0.1. Two measurements per route:
//  - closed loop: CONCURRENCY requests always in flight for DURATION_S → sustained requests/s;
//  - open loop: OPEN_RATE requests/s on a fixed schedule for DURATION_S → p50/p99 latency,
//    measured from each request's scheduled send time, so a stalled server (or generator) shows
//    up as latency instead of silently lowering the offered rate (coordinated omission).
// Environment: BENCH_DATABASE_URL (a server where `create database` is allowed; default the
// local trust-auth PostgreSQL), BENCH_DURATION_S, BENCH_CONCURRENCY, BENCH_OPEN_RATE, and
// BENCH_PG_SETTINGS (e.g. synchronous_commit=off, set on the benchmark's database only).
import postgres from "postgres";
import { createBenchDatabase } from "./harness/database.ts";
import { heartbeat, registerNode } from "../db/nodes.ts";
import { percentile } from "./harness/stats.ts";
import { setTimeout as sleep } from "node:timers/promises";

const DURATION_S = Number(Deno.env.get("BENCH_DURATION_S") ?? 10);
const WARMUP_S = Math.min(3, DURATION_S);
const CONCURRENCY = Number(Deno.env.get("BENCH_CONCURRENCY") ?? 48);
const OPEN_RATE = Number(Deno.env.get("BENCH_OPEN_RATE") ?? 500);
const REQUEST_TIMEOUT_MS = 10_000;

const TARGET_RPS = 2000;
const TARGET_P99_MS = 15;

/** A realistic sk_ call: labels, a little init, a voice change and an idle timeout. */
const connectBody = (agentId: string) =>
  JSON.stringify({
    agent_id: agentId,
    init: { customer_id: "cus_1234567890", plan: "gold", locale: "en-IN" },
    config: { tts: { voice: "VOICE_ARJUN" }, idle: { timeout_ms: 15000 } },
    display_name: "Benchmark call",
    metadata: { source: "bench", campaign: "spring" },
  });

interface Target {
  name: string;
  url: string;
  init: RequestInit;
}

interface Result {
  completed: number;
  errors: number;
  seconds: number;
  latencies: Float64Array;
}

const rps = (r: Result) => r.completed / r.seconds;

/** The `p`th percentile of a result's (sorted) latencies: harness/stats.ts's nearest rank. */
const pctOf = (r: Result, p: number) => percentile(Array.from(r.latencies), p);

function finish(latencies: number[], completed: number, errors: number, seconds: number): Result {
  return { completed, errors, seconds, latencies: Float64Array.from(latencies).sort() };
}

/** Non-200 replies by status and code (0: no reply), so a refusal is not mistaken for speed. */
const refusals = new Map<string, number>();

/** One request; the body is read fully so the connection goes back to the keep-alive pool. */
async function send(t: Target): Promise<boolean> {
  let tag: string;
  try {
    const res = await fetch(t.url, { ...t.init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    const text = await res.text();
    if (res.status === 200) return true;
    let code = "";
    try {
      code = JSON.parse(text)?.error?.code ?? "";
    } catch { /* not JSON */ }
    tag = `${t.name} ${res.status} ${code}`;
  } catch (err) {
    tag = `${t.name} 0 ${(err as Error).name}`;
  }
  refusals.set(tag, (refusals.get(tag) ?? 0) + 1);
  return false;
}

async function closedLoop(t: Target, seconds: number, concurrency: number): Promise<Result> {
  const latencies: number[] = [];
  let completed = 0, errors = 0;
  const start = performance.now();
  const end = start + seconds * 1000;
  const worker = async () => {
    while (performance.now() < end) {
      const t0 = performance.now();
      const ok = await send(t);
      latencies.push(performance.now() - t0);
      completed++;
      if (!ok) errors++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return finish(latencies, completed, errors, (performance.now() - start) / 1000);
}

async function openLoop(t: Target, seconds: number, rate: number): Promise<Result> {
  const total = Math.round(seconds * rate);
  const interval = 1000 / rate;
  const latencies: number[] = [];
  const pending: Promise<void>[] = [];
  let completed = 0, errors = 0;
  const start = performance.now() + 5;
  let i = 0;
  while (i < total) {
    const now = performance.now();
    // Everything whose time has come goes out now; lateness is charged to the request.
    while (i < total && start + i * interval <= now) {
      const scheduled = start + i * interval;
      pending.push(
        send(t).then((ok) => {
          latencies.push(performance.now() - scheduled);
          completed++;
          if (!ok) errors++;
        }),
      );
      i++;
    }
    if (i < total) await sleep(Math.max(0, start + i * interval - performance.now()));
  }
  await Promise.all(pending);
  return finish(latencies, completed, errors, (performance.now() - start) / 1000);
}

async function spawnServer(databaseUrl: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("./connect_server.ts", import.meta.url).pathname],
    env: { DATABASE_URL: databaseUrl },
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("bench server exited before listening");
    text += value;
  }
  reader.releaseLock();
  const info = JSON.parse(text.slice(0, text.indexOf("\n"))) as {
    port: number;
    admin_token: string;
  };
  const stdin = child.stdin.getWriter();
  return {
    ...info,
    async stop() {
      // Closing stdin asks the server to shut down cleanly (it drains and closes its pool).
      await stdin.close().catch(() => {});
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await child.status;
      clearTimeout(timer);
      await child.stdout.cancel().catch(() => {});
    },
  };
}

const fmt = (n: number, digits = 1) => Number.isFinite(n) ? n.toFixed(digits) : "-";

function printTable(
  rows: { connect: Result; bare: Result }[],
  labels: { closed: string; open: string },
) {
  const [closed, open] = rows;
  const line = (cells: string[]) =>
    console.log(
      cells[0].padEnd(34) + cells.slice(1).map((c, i) => c.padStart(i === 3 ? 18 : 14)).join(""),
    );
  line(["", "connect", "bare", "connect/bare", "target"]);
  line(["-".repeat(32), "-".repeat(12), "-".repeat(12), "-".repeat(12), "-".repeat(16)]);
  const c = closed.connect, b = closed.bare;
  line([
    `closed loop ${labels.closed}: req/s`,
    fmt(rps(c), 0),
    fmt(rps(b), 0),
    fmt(rps(c) / rps(b), 3),
    `>= ${TARGET_RPS} ${rps(c) >= TARGET_RPS ? "MET" : "MISSED"}`,
  ]);
  for (const p of [50, 99]) {
    const pc = pctOf(c, p), pb = pctOf(b, p);
    line([`closed loop ${labels.closed}: p${p} ms`, fmt(pc, 2), fmt(pb, 2), fmt(pc / pb, 2), ""]);
  }
  const oc = open.connect, ob = open.bare;
  for (const p of [50, 99]) {
    const pc = pctOf(oc, p), pb = pctOf(ob, p);
    const target = p === 99
      ? `<= ${TARGET_P99_MS} ms ${pc <= TARGET_P99_MS ? "MET" : "MISSED"}`
      : "";
    line([`open loop ${labels.open}: p${p} ms`, fmt(pc, 2), fmt(pb, 2), fmt(pc / pb, 2), target]);
  }
  const mc = oc.latencies.at(-1) ?? NaN, mb = ob.latencies.at(-1) ?? NaN;
  line([`open loop ${labels.open}: max ms`, fmt(mc, 2), fmt(mb, 2), fmt(mc / mb, 2), ""]);
  line([
    `open loop ${labels.open}: achieved/s`,
    fmt(rps(oc), 0),
    fmt(rps(ob), 0),
    "",
    "",
  ]);
  const errs = (r: Result[]) => r.reduce((s, x) => s + x.errors, 0);
  const done = (r: Result[]) => r.reduce((s, x) => s + x.completed, 0);
  line([
    "non-200 replies / requests",
    `${errs([c, oc])}/${done([c, oc])}`,
    `${errs([b, ob])}/${done([b, ob])}`,
    "",
    "",
  ]);
}

export async function run(): Promise<void> {
  const database = await createBenchDatabase();
  const dbName = database.name;
  // Diagnostic knob: database-level settings such as synchronous_commit=off, to measure what
  // the commit wait costs without touching the code under test.
  for (const setting of (Deno.env.get("BENCH_PG_SETTINGS") ?? "").split(",").filter(Boolean)) {
    const [name, value] = setting.split("=");
    await database.set(name, value ?? "");
  }
  const dbUrl = new URL(database.url);
  let server: Awaited<ReturnType<typeof spawnServer>> | undefined;
  const sql = postgres(dbUrl.toString(), { max: 2, onnotice: () => {} });
  let beat: ReturnType<typeof setInterval> | undefined;
  try {
    server = await spawnServer(dbUrl.toString());
    const base = `http://127.0.0.1:${server.port}`;
    // A worker node as media/ registers it, with room for every session this run mints, and a
    // heartbeat so it stays live past NODE_STALE_SECONDS as a running worker would.
    await registerNode(sql, {
      node_id: "node-bench-1",
      offer_base_url: "http://127.0.0.1:9/worker",
      capacity: 1_000_000_000,
    });
    beat = setInterval(() => heartbeat(sql, "node-bench-1").catch(() => {}), 1000);

    const made = await fetch(`${base}/api/v1/agents.create`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${server.admin_token}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({
        tenant: "bench",
        name: "Bench",
        brain_url: "wss://brain.example.test/voice",
      }),
    });
    const agent = await made.json();
    if (made.status !== 200) throw new Error(`agents.create: ${JSON.stringify(agent)}`);
    const headers = {
      authorization: `Bearer ${agent.session_key}`,
      "content-type": "application/json",
    };
    const body = connectBody(agent.agent.agent_id);
    const connect: Target = {
      name: "connect",
      url: `${base}/api/v1/sessions.connect`,
      init: { method: "POST", headers, body },
    };
    const bare: Target = {
      name: "bare",
      url: `${base}/bench/bare`,
      init: { method: "POST", headers, body },
    };

    // Fail loudly rather than benchmark a refusal.
    const probe = await fetch(connect.url, connect.init);
    const probeBody = await probe.json();
    if (probe.status !== 200 || !probeBody.webrtc_request_params) {
      throw new Error(`sessions.connect probe: ${probe.status} ${JSON.stringify(probeBody)}`);
    }

    console.log(
      `sessions.connect benchmark: API in its own process (pool 10), PostgreSQL at ` +
        `${dbUrl.host}/${dbName}, ${navigator.hardwareConcurrency} cores shared by API, ` +
        `PostgreSQL and load generator; ${DURATION_S} s per phase after ${WARMUP_S} s warm-up.` +
        (Deno.env.get("BENCH_PG_SETTINGS")
          ? ` Database settings: ${Deno.env.get("BENCH_PG_SETTINGS")}.`
          : ""),
    );
    // Other work on the machine skews every figure; the load average says how much there was.
    const load = () => Deno.loadavg().map((x) => x.toFixed(2)).join(" ");
    console.log(`load average before: ${load()}`);
    await closedLoop(bare, WARMUP_S, CONCURRENCY);
    await closedLoop(connect, WARMUP_S, CONCURRENCY);

    const closedBare = await closedLoop(bare, DURATION_S, CONCURRENCY);
    const closedConnect = await closedLoop(connect, DURATION_S, CONCURRENCY);
    const openBare = await openLoop(bare, DURATION_S, OPEN_RATE);
    const openConnect = await openLoop(connect, DURATION_S, OPEN_RATE);
    console.log("");
    printTable(
      [{ connect: closedConnect, bare: closedBare }, { connect: openConnect, bare: openBare }],
      { closed: `c=${CONCURRENCY}`, open: `${OPEN_RATE}/s` },
    );
    const [{ sessions }] = await sql<{ sessions: number }[]>`
      select count(*)::int as sessions from sessions where status = 'created'`;
    for (const [tag, n] of refusals) console.log(`non-200: ${tag} x${n}`);
    console.log(`\n${sessions} sessions minted in this run; load average after: ${load()}`);
  } finally {
    clearInterval(beat);
    await server?.stop();
    await sql.end({ timeout: 5 });
    await database.drop();
  }
}

if (import.meta.main) await run();
