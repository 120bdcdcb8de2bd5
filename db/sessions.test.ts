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
  forgetExpiredAdmissionKeys,
  markActive,
  markConnecting,
  type NewSession,
  openSession,
  releaseLapsedHolds,
  reserveSession,
} from "./sessions.ts";
import { getSession, listSessions } from "./session_records.ts";
import { createKey } from "./keys.ts";
import { appendEvents } from "./events.ts";
import { newId } from "../common/ids.ts";

async function seed(db: Database) {
  const agent = await createAgent(db.sql, { tenant: "acme", name: "A", brain_url: "wss://b" });
  await registerNode(db.sql, { node_id: "n1", offer_base_url: "http://127.0.0.1:1", capacity: 2 });
  const session = (ttlMs = 60_000, keyId: string | null = null): NewSession => ({
    session_id: newId("ses"),
    agent_id: agent.agent_id,
    workspace_id: agent.workspace_id,
    key_id: keyId,
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
  assertEquals(await markConnecting(db.sql, s.session_id, "tok_other", "n1"), "not_waiting");
  assertEquals(await markConnecting(db.sql, s.session_id, s.token_id, "n2"), "not_waiting");
  assertEquals(await markConnecting(db.sql, s.session_id, s.token_id, "n1"), "connected");
  assertEquals(
    await markConnecting(db.sql, s.session_id, s.token_id, "n1"),
    "not_waiting",
    "token reuse",
  );
  assertEquals(await load(), 1, "connecting keeps the slot it reserved");
  assertEquals(await markActive(db.sql, s.session_id), {
    record: false,
    echoCancellation: "auto",
  });
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
  // A full fleet is a passing condition (503 workers_full): nothing is written for it.
  assertEquals((await reserveSession(db.sql, c, 10)).kind, "full");
  assertEquals(await getSession(db.sql, c.session_id), undefined);
  const usage = await db.sql`select session_id from usage order by session_id`;
  assertEquals(usage.map((u) => u.session_id).sort(), [a.session_id, b.session_id].sort());
  assertEquals(await expireUnused(db.sql), 1);
  assertEquals((await getSession(db.sql, a.session_id))!.status, "expired");
  assertEquals(await load(), 1);
  assertEquals(await markConnecting(db.sql, a.session_id, a.token_id, "n1"), "not_waiting");
});

const statusOf = async (db: Database, id: string) =>
  (await db.sql`select status, holds_slot from sessions where id = ${id}`)[0];

testOnEveryDatabase(
  "a lapsed pre-offer hold gives the slot back once and the offer takes one only if there is room",
  async (db) => {
    const { session, load } = await seed(db); // n1 has 2 slots
    const late = session(), b = session(), c = session();
    assertEquals(
      (await openSession(db.sql, late, 10, undefined, { holdSeconds: 0 }))?.node_id,
      "n1",
    );
    assertEquals(await load(), 1);
    assertEquals(await releaseLapsedHolds(db.sql), 1);
    assertEquals(await releaseLapsedHolds(db.sql), 0, "released once");
    assertEquals(await load(), 0);
    assertEquals(await statusOf(db, late.session_id), { status: "created", holds_slot: false });

    // The node fills up meanwhile: the late offer is refused and the session stays as it was.
    for (const s of [b, c]) {
      assertEquals(
        (await openSession(db.sql, s, 10, undefined, { holdSeconds: 60 }))?.node_id,
        "n1",
      );
    }
    assertEquals(await releaseLapsedHolds(db.sql), 0, "holds not over yet stay");
    assertEquals(await markConnecting(db.sql, late.session_id, late.token_id, "n1"), "node_full");
    assertEquals(await load(), 2);
    assertEquals(await statusOf(db, late.session_id), { status: "created", holds_slot: false });

    // A slot frees: the same token now starts the call, taking the slot again.
    assertEquals(await finishSession(db.sql, b.session_id, "ended", "hangup"), true);
    assertEquals(await load(), 1);
    assertEquals(await markConnecting(db.sql, late.session_id, late.token_id, "n1"), "connected");
    assertEquals(await load(), 2);
    assertEquals(await statusOf(db, late.session_id), { status: "connecting", holds_slot: true });
    assertEquals(await finishSession(db.sql, late.session_id, "ended", "hangup"), true);
    assertEquals(await load(), 1);
  },
);

testOnEveryDatabase(
  "ends and expiries of sessions that gave their slot back release nothing",
  async (db) => {
    const { session, load } = await seed(db);
    await db.sql`update worker_nodes set capacity = 10 where id = 'n1'`;
    const ended = session(), expired = session(-1000), live = session();
    for (const s of [ended, expired]) {
      await openSession(db.sql, s, 10, undefined, {
        holdSeconds: 0,
      });
    }
    await openSession(db.sql, live, 10, undefined, { holdSeconds: 60 });
    assertEquals(await load(), 3);
    assertEquals(await releaseLapsedHolds(db.sql), 2);
    assertEquals(await load(), 1);
    assertEquals(
      await finishSession(db.sql, ended.session_id, "failed", "brain_unreachable"),
      true,
    );
    assertEquals(await expireUnused(db.sql), 1);
    assertEquals(await load(), 1, "only the live session's slot is still counted");
    assertEquals(await finishSession(db.sql, live.session_id, "ended", "hangup"), true);
    assertEquals(await load(), 0);
  },
);

testOnEveryDatabase("releases racing on the same sessions give each slot back once", async (db) => {
  const { session, load } = await seed(db);
  // Five slots held by nothing we touch: a slot given back twice would eat into them.
  await db.sql`update worker_nodes set capacity = 100, active_calls = 5 where id = 'n1'`;
  const made = [...Array(12)].map((_, i) => session(i % 2 ? -1000 : 60_000));
  for (const s of made) await openSession(db.sql, s, 10, undefined, { holdSeconds: 0 });
  assertEquals(await load(), 17);
  await Promise.all([
    releaseLapsedHolds(db.sql),
    expireUnused(db.sql),
    releaseLapsedHolds(db.sql),
    expireUnused(db.sql),
    ...made.flatMap((s) => [
      finishSession(db.sql, s.session_id, "failed", "a"),
      finishSession(db.sql, s.session_id, "failed", "b"),
      markConnecting(db.sql, s.session_id, s.token_id, "n1"),
    ]),
  ]);
  await releaseLapsedHolds(db.sql);
  await expireUnused(db.sql);
  for (const s of made) await finishSession(db.sql, s.session_id, "ended", "hangup");
  assertEquals(await load(), 5);
  const [held] = await db.sql`select count(*)::int as n from sessions where holds_slot`;
  assertEquals(held.n, 0);
});

testOnEveryDatabase(
  "a key's sessions waiting for their offer are limited, and a refusal writes nothing",
  async (db) => {
    const { agent, session, load } = await seed(db);
    await db.sql`update worker_nodes set capacity = 10 where id = 'n1'`;
    const key = async () =>
      (await createKey(db.sql, "secret", {
        agent_id: agent.agent_id,
        workspace_id: agent.workspace_id,
        kind: "publishable",
      })).key.key_id;
    const k1 = await key(), k2 = await key();
    const admission = { holdSeconds: 15, pendingPerKey: 2 };
    const a = session(60_000, k1), b = session(60_000, k1);
    for (const s of [a, b]) {
      assertEquals((await reserveSession(db.sql, s, 10, undefined, admission)).kind, "reserved");
    }
    const counts = async () =>
      (await db.sql`select (select count(*)::int from sessions) as sessions,
        (select count(*)::int from usage) as usage`)[0];
    const before = { ...(await counts()), load: await load() };
    const refused = await reserveSession(db.sql, session(60_000, k1), 10, undefined, admission);
    assertEquals(refused.kind, "pending_limit");
    const wait = refused.kind === "pending_limit" ? refused.retryAfterSeconds : 0;
    assert(wait >= 14 && wait <= 15, `retry after ${wait} s, when the first hold ends`);
    assertEquals({ ...(await counts()), load: await load() }, before, "nothing written");

    // Another key is not affected.
    assertEquals(
      (await reserveSession(db.sql, session(60_000, k2), 10, undefined, admission)).kind,
      "reserved",
    );
    // A session whose offer came no longer counts...
    assertEquals(await markConnecting(db.sql, a.session_id, a.token_id, "n1"), "connected");
    const c = session(60_000, k1);
    assertEquals((await reserveSession(db.sql, c, 10, undefined, admission)).kind, "reserved");
    assertEquals(
      (await reserveSession(db.sql, session(60_000, k1), 10, undefined, admission)).kind,
      "pending_limit",
    );
    // ...nor does one whose hold is over.
    await db
      .sql`update sessions set hold_until = now() - interval '1 second' where id = ${b.session_id}`;
    assertEquals(
      (await reserveSession(db.sql, session(60_000, k1), 10, undefined, admission)).kind,
      "reserved",
    );
    // 0 turns the limit off.
    for (let i = 0; i < 3; i++) {
      const r = await reserveSession(db.sql, session(60_000, k1), 10, undefined, {
        pendingPerKey: 0,
      });
      assertEquals(r.kind, "reserved");
    }
  },
);

testOnEveryDatabase(
  "paging one at a time returns sessions that share a millisecond",
  async (db) => {
    const { session } = await seed(db);
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) { // n1's 2 slots
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

testOnEveryDatabase(
  "an admission key is used once, even by two reservations racing for it",
  async (db) => {
    const { session, load } = await seed(db);
    const once = { keys: ["twilio-call:CA1"], seconds: 60 };
    const [a, b] = [session(), session()];
    const results = await Promise.all(
      [a, b].map((s) => reserveSession(db.sql, s, 10, undefined, { phone: true, once })),
    );
    assertEquals(results.map((r) => r.kind).sort(), ["replayed", "reserved"]);
    assertEquals(await load(), 1, "the replay reserved no slot");
    const [{ n }] = await db.sql`select count(*)::int as n from sessions`;
    assertEquals(n, 1, "the replay wrote no session");
    const again = await reserveSession(db.sql, session(), 10, undefined, { phone: true, once });
    assertEquals(again.kind, "replayed");
    assertEquals(await forgetExpiredAdmissionKeys(db.sql), 0, "not expired yet");
  },
);

testOnEveryDatabase(
  "a trunk's and a source's sessions not yet started are capped, and a refusal writes nothing",
  async (db) => {
    const { session, load } = await seed(db);
    const trunk = { id: "trk_1", pending: 1 };
    const first = await reserveSession(db.sql, session(), 10, undefined, { phone: true, trunk });
    assertEquals(first.kind, "reserved");
    const second = await reserveSession(db.sql, session(), 10, undefined, { phone: true, trunk });
    assert(second.kind === "pending_limit" && second.limit === "trunk", JSON.stringify(second));
    assert(second.retryAfterSeconds >= 1);
    const source = { key: "sip:192.0.2.1", pending: 1 };
    const other = { id: "trk_2", pending: 1 };
    const s3 = await reserveSession(db.sql, session(), 10, undefined, {
      phone: true,
      trunk: other,
      source,
    });
    assertEquals(s3.kind, "reserved");
    const s4 = await reserveSession(db.sql, session(), 10, undefined, { phone: true, source });
    assert(s4.kind === "pending_limit" && s4.limit === "source", JSON.stringify(s4));
    assertEquals(await load(), 2);
    const [{ n }] = await db.sql`select count(*)::int as n from sessions`;
    assertEquals(n, 2);
  },
);
