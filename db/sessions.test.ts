// The session write path on both databases: reservation with the row, release on end and
// expiry, and the legal status transitions only.
import { assert, assertEquals } from "../tests/helpers/assert.ts";
import { testOnEveryDatabase } from "../tests/helpers/database.ts";
import type { Database } from "./client.ts";
import { createAgent } from "./agents.ts";
import { registerNode } from "./nodes.ts";
import {
  expireUnused,
  finishSession,
  getSession,
  listSessions,
  markActive,
  markConnecting,
  type NewSession,
  openSession,
} from "./sessions.ts";
import { appendEvents } from "./events.ts";
import { newId } from "../common/ids.ts";

async function seed(db: Database) {
  const agent = await createAgent(db.sql, { tenant: "acme", name: "A", brain_url: "wss://b" });
  await registerNode(db.sql, { node_id: "n1", offer_base_url: "http://127.0.0.1:1", capacity: 2 });
  const session = (ttlMs = 60_000): NewSession => ({
    session_id: newId("ses"),
    agent_id: agent.agent_id,
    workspace_id: agent.workspace_id,
    key_id: null,
    token_id: newId("tok"),
    token_expires_at: new Date(Date.now() + ttlMs),
    agent_input: { init: null },
    display_name: null,
    metadata: {},
    record_requested: null,
    record_effective: false,
  });
  const load = async () =>
    (await db.sql`select active_calls from worker_nodes where id = 'n1'`)[0].active_calls;
  return { agent, session, load };
}

testOnEveryDatabase("a call's life: created, connecting, active, ended", async (db) => {
  const { session, load } = await seed(db);
  const s = session();
  assertEquals((await openSession(db.sql, s, 10))?.node_id, "n1");
  assertEquals(await load(), 1);
  assertEquals(await markActive(db.sql, s.session_id), undefined, "active before connecting");
  assertEquals(await markConnecting(db.sql, s.session_id, "tok_other", "n1"), false);
  assertEquals(await markConnecting(db.sql, s.session_id, s.token_id, "n2"), false);
  assertEquals(await markConnecting(db.sql, s.session_id, s.token_id, "n1"), true);
  assertEquals(await markConnecting(db.sql, s.session_id, s.token_id, "n1"), false, "token reuse");
  assertEquals(await markActive(db.sql, s.session_id), { record: false });
  await appendEvents(db.sql, [
    { session_id: s.session_id, source: "brain", kind: "Greeting", data: { text: "hi" } },
    { session_id: s.session_id, source: "worker", kind: "SessionStart" },
  ]);
  await new Promise((r) => setTimeout(r, 20));
  assertEquals(await finishSession(db.sql, s.session_id, "ended", "hangup"), true);
  assertEquals(await finishSession(db.sql, s.session_id, "failed", "late"), false);
  assertEquals(await load(), 0);
  const rec = (await getSession(db.sql, s.session_id))!;
  assertEquals([rec.status, rec.end_reason], ["ended", "hangup"]);
  assertEquals(rec.log.map((e) => e.kind), ["Greeting", "SessionStart"]);
  assert(rec.usage.call_seconds > 0);
});

testOnEveryDatabase("capacity is enforced and unused tokens expire", async (db) => {
  const { session, load } = await seed(db);
  const a = session(-1000), b = session(), c = session();
  assertEquals((await openSession(db.sql, a, 10))?.node_id, "n1");
  assertEquals((await openSession(db.sql, b, 10))?.node_id, "n1");
  assertEquals(await openSession(db.sql, c, 10), undefined, "node full");
  const failed = (await getSession(db.sql, c.session_id))!;
  assertEquals([failed.status, failed.end_reason, failed.node_id], ["failed", "no_worker", null]);
  const usage = await db.sql`select session_id from usage order by session_id`;
  assertEquals(usage.map((u) => u.session_id).sort(), [a.session_id, b.session_id].sort());
  assertEquals(await expireUnused(db.sql), 1);
  assertEquals((await getSession(db.sql, a.session_id))!.status, "expired");
  assertEquals(await load(), 1);
  assertEquals(await markConnecting(db.sql, a.session_id, a.token_id, "n1"), false);
});

testOnEveryDatabase(
  "paging one at a time returns sessions that share a millisecond",
  async (db) => {
    const { session } = await seed(db);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const s = session();
      await openSession(db.sql, s, 10);
      ids.push(s.session_id);
    }
    // Microseconds apart, the same millisecond: a millisecond cursor must still find them all.
    await db.sql`update sessions set created_at = '2026-01-01T00:00:00.123456Z'::timestamptz
    + (row_number * interval '1 microsecond')
    from (select id as rid, row_number() over (order by id) as row_number from sessions) r
    where r.rid = sessions.id`;
    const seen: string[] = [];
    let cursor: { created_at: Date; session_id: string } | undefined;
    for (let page = 0; page < 5; page++) {
      const rows = await listSessions(db.sql, { limit: 1, cursor });
      if (rows.length === 0) break;
      seen.push(rows[0].session_id);
      cursor = { created_at: rows[0].timings.created_at as Date, session_id: rows[0].session_id };
    }
    assertEquals(seen.sort(), ids.sort());
  },
);
