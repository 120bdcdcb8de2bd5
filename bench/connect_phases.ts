// Where a sessions.connect spends its time, phase by phase, in one process and without HTTP:
// key hash + cache lookup, body parse, the openSession statement (alone and with 10 in flight),
// and token signing. Explains the figures of bench/connect.ts.
// Run: deno run -A bench/connect_phases.ts
import postgres from "postgres";
import { createBenchDatabase } from "./harness/database.ts";
import { openDatabase } from "../db/client.ts";
import { heartbeat, registerNode } from "../db/nodes.ts";
import { type NewSession, openSession } from "../db/sessions.ts";
import { createAgent } from "../db/agents.ts";
import { createKey } from "../db/keys.ts";
import { hashKey } from "../common/key_hash.ts";
import { newId } from "../common/ids.ts";
import { generateSigningJwk, TokenSigner } from "../common/token.ts";
import { LOCAL_ENGINES } from "../common/capabilities.ts";
import { KeyStore } from "../api/auth/key_store.ts";
import { parseConnectBody } from "../api/connect/parse.ts";

/** Mean microseconds per call of a synchronous or asynchronous step, after a warm-up. */
async function perCall(n: number, step: () => unknown): Promise<number> {
  for (let i = 0; i < Math.min(200, n); i++) await step();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await step();
  return ((performance.now() - t0) / n) * 1000;
}

/** Calls/s of an asynchronous step with `concurrency` calls always in flight. */
async function throughput(seconds: number, concurrency: number, step: () => Promise<unknown>) {
  let done = 0;
  const end = performance.now() + seconds * 1000;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (performance.now() < end) {
      await step();
      done++;
    }
  }));
  return done / ((performance.now() - t0) / 1000);
}

export async function run(): Promise<void> {
  const database = await createBenchDatabase();
  const url = database.url;
  const db = await openDatabase({ url: url.toString(), max: 10 });
  try {
    const agent = await createAgent(db.sql, {
      tenant: "bench",
      name: "Bench",
      brain_url: "wss://brain.example.test/voice",
    });
    const secret = "bench-hash-secret";
    const { session_key } = await createKey(db.sql, secret, {
      agent_id: agent.agent_id,
      workspace_id: agent.workspace_id,
      kind: "secret",
    });
    await registerNode(db.sql, {
      node_id: "node-bench-1",
      offer_base_url: "http://127.0.0.1:9/worker",
      capacity: 1_000_000_000,
    });
    const keys = new KeyStore(db.sql, secret);
    const signer = await TokenSigner.fromJwk(await generateSigningJwk());
    const text = JSON.stringify({
      agent_id: agent.agent_id,
      init: { customer_id: "cus_1234567890", plan: "gold", locale: "en-IN" },
      config: { tts: { voice: "VOICE_ARJUN" }, idle: { timeout_ms: 15000 } },
      display_name: "Benchmark call",
      metadata: { source: "bench", campaign: "spring" },
    });
    const req = parseConnectBody(JSON.parse(text), LOCAL_ENGINES);
    const session = (): NewSession => ({
      session_id: newId("ses"),
      agent_id: agent.agent_id,
      workspace_id: agent.workspace_id,
      key_id: null,
      token_id: newId("tok"),
      token_expires_at: new Date(Date.now() + 300_000),
      agent_input: req.input,
      display_name: req.input.display_name,
      metadata: req.input.metadata,
      record_requested: req.input.record,
      record_effective: false,
    });
    const mint = () =>
      signer.mint({
        sid: newId("ses"),
        aud: "node-bench-1",
        sub: agent.agent_id,
        ten: agent.workspace_id,
        input: req.input,
      }, { jti: newId("tok"), expiresAt: new Date(Date.now() + 300_000) });

    const rows: [string, string][] = [];
    const us = (v: number) => `${v.toFixed(1)} µs/call`;
    rows.push([
      "hashKey (HMAC-SHA-256)",
      us(await perCall(20_000, () => hashKey(secret, session_key))),
    ]);
    rows.push([
      "KeyStore.resolve (cached)",
      us(await perCall(20_000, () => keys.resolve(session_key))),
    ]);
    rows.push([
      "JSON.parse + parseConnectBody",
      us(await perCall(20_000, () => parseConnectBody(JSON.parse(text), LOCAL_ENGINES))),
    ]);
    rows.push(["newId x2", us(await perCall(20_000, () => [newId("ses"), newId("tok")]))]);
    rows.push(["signer.mint (EdDSA JWT)", us(await perCall(3_000, mint))]);
    rows.push([
      "signer.mint, 32 in flight",
      `${(await throughput(3, 32, mint)).toFixed(0)} tokens/s`,
    ]);
    rows.push(["select 1, one at a time", us(await perCall(3_000, () => db.sql`select 1`))]);
    rows.push([
      "select 1, 32 in flight (pool 10)",
      `${(await throughput(3, 32, () => db.sql`select 1`)).toFixed(0)} statements/s`,
    ]);
    rows.push([
      "openSession, one at a time",
      us(await perCall(2_000, () => openSession(db.sql, session(), 3600))),
    ]);
    for (const c of [4, 10, 32]) {
      rows.push([
        `openSession, ${c} in flight (pool 10)`,
        `${(await throughput(4, c, () => openSession(db.sql, session(), 3600))).toFixed(0)} /s`,
      ]);
    }
    // The same insert without the shared worker_nodes row: what the node counter costs.
    const insertOnly = () => {
      const s = session();
      return db.sql`with session as (
          insert into sessions (id, agent_id, workspace_id, key_id, status, node_id, token_id,
            token_expires_at, agent_input, display_name, metadata, record_requested,
            record_effective)
          values (${s.session_id}, ${s.agent_id}, ${s.workspace_id}, null, 'created',
            'node-bench-1', ${s.token_id}, ${s.token_expires_at},
            ${db.sql.json(s.agent_input as never)}, ${s.display_name},
            ${db.sql.json(s.metadata)}, null, false)
          returning id
        ) insert into usage (session_id, workspace_id, agent_id)
          select id, ${s.workspace_id}, ${s.agent_id} from session`;
    };
    rows.push([
      "sessions+usage insert only, 32 in flight",
      `${(await throughput(4, 32, insertOnly)).toFixed(0)} /s`,
    ]);
    // Candidate fixes, measured on the same database:
    // (a) the current statement on connections with synchronous_commit off (no fsync wait
    //     while the worker_nodes row lock is held; a crash may lose the last few ms of sessions);
    const asyncPool = postgres(url.toString(), {
      max: 10,
      onnotice: () => {},
      connection: { synchronous_commit: "off" },
    });
    try {
      rows.push([
        "(a) openSession, sync commit off, 32 in flight",
        `${(await throughput(4, 32, () => openSession(asyncPool, session(), 3600))).toFixed(0)} /s`,
      ]);
      // (b) the slot reserved in its own tiny statement on a synchronous_commit=off connection
      //     (the row lock is held for microseconds), then the session and usage rows inserted
      //     durably on the normal pool, where concurrent commits share one fsync.
      const reserve = () =>
        asyncPool`update worker_nodes set active_calls = active_calls + 1
          where id = 'node-bench-1' and active_calls < capacity returning id, offer_base_url`;
      rows.push([
        "(b) reservation update alone, 32 in flight",
        `${(await throughput(4, 32, reserve)).toFixed(0)} /s`,
      ]);
      rows.push([
        "(b) reservation + durable insert, 32 in flight",
        `${
          (await throughput(4, 32, async () => {
            await reserve();
            await insertOnly();
          })).toFixed(0)
        } /s`,
      ]);
    } finally {
      await asyncPool.end({ timeout: 5 });
    }
    await heartbeat(db.sql, "node-bench-1");
    console.log("sessions.connect phases (in process, no HTTP):");
    for (const [k, v] of rows) console.log(`  ${k.padEnd(48)} ${v}`);
  } finally {
    await db.close();
    await database.drop();
  }
}

if (import.meta.main) await run();
