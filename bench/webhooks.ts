// `deno task bench webhooks`: what signed webhooks cost a call, all in one run on a PostgreSQL of
// the bench's own (bench/harness/database.ts):
//  1. the session's end write (db/sessions.ts finishSession with a 10-turn transcript) for an
//     agent whose workspace has no endpoint (the baseline: webhook_enqueue's one probe) and for
//     one with an endpoint (the event and its delivery written in the same statement),
//     interleaved so both see the same database;
//  2. how long after the end is written a receiver on this machine has session.ended, verified
//     with npm:standardwebhooks (the dispatcher passes every 500 ms);
//  3. how fast one dispatcher drains a backlog (events per second, 8 requests in flight).
// Environment: WEBHOOK_BENCH_SESSIONS (default 300 per case).
import { createBenchDatabase } from "./harness/database.ts";
import { mean, percentile } from "./harness/stats.ts";
import { openDatabase } from "../db/client.ts";
import { createAgent } from "../db/agents.ts";
import { createEndpoint } from "../db/webhooks.ts";
import { WebhookDispatcher } from "../api/webhooks/dispatcher.ts";
import { importSealingKey, newSealingKeyText, seal } from "../common/sealed.ts";
import { newWebhookSecret } from "../common/webhooks/signature.ts";
import { setQuiet } from "../common/log.ts";
import { CUT_TURN, sessionWriter } from "../tests/helpers/webhook_sessions.ts";
import { WebhookReceiver } from "../tests/helpers/webhook_receiver.ts";
import { finishSession } from "../db/sessions.ts";

setQuiet(true);
const N = Number(Deno.env.get("WEBHOOK_BENCH_SESSIONS") ?? 300);
const bench = await createBenchDatabase("webhooks");
const db = await openDatabase({ url: bench.url, max: 4 });
const receiver = new WebhookReceiver(newWebhookSecret());
receiver.up();
const key = await importSealingKey(newSealingKeyText());
const fmt = (xs: number[]) =>
  `p50 ${percentile(xs, 50).toFixed(2)} ms, p95 ${percentile(xs, 95).toFixed(2)} ms, ` +
  `mean ${mean(xs).toFixed(2)} ms`;

try {
  const quiet = await createAgent(db.sql, { tenant: "quiet", name: "A", brain_url: "wss://b" });
  const hooked = await createAgent(db.sql, { tenant: "hooked", name: "B", brain_url: "wss://b" });
  const secret = (receiver as unknown as { secret: string }).secret;
  await createEndpoint(db.sql, {
    endpoint_id: "whk_bench",
    workspace_id: hooked.workspace_id,
    agent_id: null,
    url: receiver.url,
    description: "",
    event_types: [],
    secret_sealed: await seal(key, secret, "whk_bench"),
  });
  const writers = {
    quiet: await sessionWriter(db.sql, quiet),
    hooked: await sessionWriter(db.sql, hooked),
  };
  const turns = Array.from({ length: 10 }, (_, i) => ({ ...CUT_TURN, turn_id: `t${i + 1}` }));
  const timed = { quiet: [] as number[], hooked: [] as number[] };

  // 1. The end writes, interleaved.
  for (let i = 0; i < N; i++) {
    for (const c of ["quiet", "hooked"] as const) {
      const id = await writers[c].start();
      const t = performance.now();
      await finishSession(db.sql, id, "ended", "caller_hung_up", {
        turns,
        recognisedSeconds: 12,
        synthesizedCharacters: 800,
      });
      timed[c].push(performance.now() - t);
    }
  }
  console.log(`sessions per case: ${N}; transcript: 10 turns`);
  console.log(`end write, no endpoint (baseline): ${fmt(timed.quiet)}`);
  console.log(`end write, one endpoint:           ${fmt(timed.hooked)}`);
  console.log(
    `  added by the outbox: ${
      (percentile(timed.hooked, 50) - percentile(timed.quiet, 50)).toFixed(2)
    } ms at p50`,
  );

  // 2. End written → receiver has it (the backlog of part 1 is cleared first).
  await db.sql`update webhook_deliveries set status = 'delivered'`;
  const dispatcher = new WebhookDispatcher(db.sql, key);
  dispatcher.start();
  const waits: number[] = [];
  for (let i = 0; i < 40; i++) {
    const id = await writers.hooked.start();
    const before = receiver.received.length;
    const t = Date.now();
    await writers.hooked.end(id);
    await receiver.waitFor(before + 2, 10_000);
    waits.push(receiver.received.at(-1)!.at - t);
  }
  await dispatcher.stop();
  console.log(`end written → receiver has session.ended (500 ms passes): ${fmt(waits)}`);

  // 3. A backlog drained by one dispatcher.
  const backlog = 500;
  for (let i = 0; i < backlog / 2; i++) {
    const id = await writers.hooked.start();
    await writers.hooked.end(id);
  }
  const before = receiver.received.length;
  const drainer = new WebhookDispatcher(db.sql, key);
  const t = performance.now();
  while (receiver.received.length < before + backlog) await drainer.drain();
  const seconds = (performance.now() - t) / 1000;
  console.log(
    `backlog of ${backlog} events, one dispatcher: ${(backlog / seconds).toFixed(0)} events/s`,
  );
  if (receiver.refused.length) throw new Error(`refused: ${receiver.refused[0]}`);
} finally {
  await receiver.down();
  await db.close();
  await bench.drop();
}
