// The outbox on a real database (PostgreSQL with DATABASE_URL, as CI runs it): two dispatchers
// with their own connection pools (two API processes) drain one backlog and the receiver sees
// each event once, each session's in order; then an API process dies mid-backlog (its pool closed
// with requests in flight, so it settles nothing) and a new one delivers everything left,
// repeating only what was in flight, under the same webhook-ids.
import { assert, assertEquals } from "./helpers/assert.ts";
import { freshDatabase } from "./helpers/database.ts";
import { WebhookReceiver } from "./helpers/webhook_receiver.ts";
import { sessionWriter } from "./helpers/webhook_sessions.ts";
import { WebhookDispatcher } from "../api/webhooks/dispatcher.ts";
import { openDatabase } from "../db/client.ts";
import { createAgent } from "../db/agents.ts";
import { createEndpoint } from "../db/webhooks.ts";
import { importSealingKey, newSealingKeyText, seal } from "../common/sealed.ts";
import { newWebhookSecret } from "../common/webhooks/signature.ts";
import { setQuiet } from "../common/log.ts";

setQuiet(true);

async function setUp(db: Awaited<ReturnType<typeof freshDatabase>>) {
  const key = await importSealingKey(newSealingKeyText());
  const agent = await createAgent(db.sql, { tenant: "acme", name: "A", brain_url: "wss://b" });
  const receiver = new WebhookReceiver(newWebhookSecret());
  receiver.up();
  const secret = (receiver as unknown as { secret: string }).secret;
  await createEndpoint(db.sql, {
    endpoint_id: "whk_test",
    workspace_id: agent.workspace_id,
    agent_id: null,
    url: receiver.url,
    description: "",
    event_types: [],
    secret_sealed: await seal(key, secret, "whk_test"),
  });
  return { key, agent, receiver, writer: await sessionWriter(db.sql, agent) };
}

function assertInOrder(received: { type: string; data: { session_id: string } }[]) {
  const seen = new Map<string, string[]>();
  for (const e of received) {
    seen.set(e.data.session_id, [...seen.get(e.data.session_id) ?? [], e.type]);
  }
  for (const [s, types] of seen) assertEquals(types, ["session.started", "session.ended"], s);
}

Deno.test("two API processes deliver each event of one backlog once, each session's in order", async () => {
  const db = await freshDatabase();
  const other = await openDatabase({ url: db.url, migrate: false, max: 4 });
  const { key, receiver, writer } = await setUp(db);
  const dispatchers = [db.sql, other.sql].map((sql) =>
    new WebhookDispatcher(sql, key, { concurrency: 4, timeoutMs: 5000 })
  );
  try {
    receiver.delayMs = 15;
    const sessions: string[] = [];
    for (let i = 0; i < 20; i++) sessions.push(await writer.start());
    for (const s of sessions) await writer.end(s);
    for (const d of dispatchers) d.start(10);
    const got = await receiver.waitFor(40, 30_000);
    await new Promise((r) => setTimeout(r, 200)); // a duplicate would arrive by now
    assertEquals(receiver.refused, []);
    assertEquals(receiver.seenIds.length, 40, "an event was sent twice");
    assertEquals(new Set(receiver.seenIds).size, 40);
    assertInOrder(got);
    assert(dispatchers.every((d) => d.sent > 0), `shares: ${dispatchers.map((d) => d.sent)}`);
    const [{ n }] = await db.sql<{ n: number }[]>`select count(*)::int as n
      from webhook_deliveries where status = 'delivered'`;
    assertEquals(n, 40);
  } finally {
    for (const d of dispatchers) await d.stop();
    await receiver.down();
    await other.close();
    await db.close();
  }
});

Deno.test("an API process that dies mid-backlog loses nothing: the next one repeats only what was in flight, same ids", async () => {
  const db = await freshDatabase();
  const doomed = await openDatabase({ url: db.url, migrate: false, max: 2 });
  const { key, receiver, writer } = await setUp(db);
  const first = new WebhookDispatcher(doomed.sql, key, { concurrency: 4, leaseSeconds: 1 });
  const next = new WebhookDispatcher(db.sql, key, { concurrency: 4, leaseSeconds: 1 });
  try {
    receiver.delayMs = 40;
    const sessions: string[] = [];
    for (let i = 0; i < 15; i++) sessions.push(await writer.start());
    for (const s of sessions) await writer.end(s);
    first.start(10);
    await receiver.waitFor(6, 15_000);
    // The crash: its connections go while requests are in flight, so nothing more is settled.
    await doomed.close().catch(() => {});
    await first.stop().catch(() => {});
    const before = receiver.seenIds.length;
    assert(before < 30, `the backlog was gone before the crash (${before})`);
    next.start(10);
    const got = await receiver.waitFor(30, 30_000);
    await new Promise((r) => setTimeout(r, 200));
    const events = (await db.sql<{ id: string }[]>`select id from webhook_events`).map((r) => r.id);
    assertEquals(events.length, 30);
    assertEquals(new Set(got.map((e) => e.id)), new Set(events), "an event was lost");
    // Only what the dead process had in flight (at most its batch) arrives twice.
    const repeats = receiver.seenIds.length - new Set(receiver.seenIds).size;
    assert(repeats <= 4, `${repeats} repeats`);
    const [{ n }] = await db.sql<{ n: number }[]>`select count(*)::int as n
      from webhook_deliveries where status = 'delivered'`;
    assertEquals(n, 30);
    assertInOrder(got.filter((e, i) => got.findIndex((f) => f.id === e.id) === i));
  } finally {
    await next.stop();
    await receiver.down();
    await db.close();
  }
});
