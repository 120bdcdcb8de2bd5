// A key may have at most PENDING_SESSIONS_PER_KEY sessions holding a node slot while waiting for
// their offer; beyond that connect is 429 rate_limited with Retry-After (when the oldest hold
// ends) and writes nothing. Other keys are not affected; a session whose offer came, or whose
// hold is over, no longer counts.
import { assert, assertEquals } from "./helpers/assert.ts";
import { makeTenant, PAGE_ORIGIN, rowCounts, startTestApi } from "./helpers/api_server.ts";

const CONNECT = "/api/v1/sessions.connect";

Deno.test("sessions waiting for their offer are limited per key, refusals write nothing", async () => {
  const api = await startTestApi({
    PENDING_SESSIONS_PER_KEY: "3",
    PRE_OFFER_HOLD_SECONDS: "15",
    RATE_LIMIT_PER_ADDRESS_PER_SECOND: "0",
  });
  try {
    const acme = await makeTenant(api);
    const globex = await makeTenant(api, "globex");
    const ok = { agent_id: acme.agent_id };
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await api.post(CONNECT, ok, acme.sk);
      assertEquals(r.status, 200);
      ids.push(r.body.session_id);
    }
    const before = await rowCounts(api.db);
    const r = await api.post(CONNECT, ok, acme.sk);
    assertEquals([r.status, r.body.error.code], [429, "rate_limited"]);
    assertEquals(r.body.error.details.limit, "pending_sessions");
    const wait = Number(r.headers.get("retry-after"));
    assert(wait >= 1 && wait <= 15, `Retry-After ${r.headers.get("retry-after")}`);
    assertEquals(r.body.error.details.retry_after_seconds, wait);
    assertEquals(await rowCounts(api.db), before, "a refused connect writes nothing");

    // The same agent's publishable key and another workspace's key have their own count.
    const pk = await api.post(CONNECT, ok, acme.pk, { origin: PAGE_ORIGIN });
    assertEquals(pk.status, 200);
    assertEquals((await api.post(CONNECT, { agent_id: globex.agent_id }, globex.sk)).status, 200);

    // An offer arriving (the worker marks the session connecting) frees a place.
    await api.db.sql`update sessions set status = 'connecting' where id = ${ids[0]}`;
    assertEquals((await api.post(CONNECT, ok, acme.sk)).status, 200);
    assertEquals((await api.post(CONNECT, ok, acme.sk)).status, 429);
    // So does a hold that is over.
    await api.db.sql`update sessions set hold_until = now() - interval '1 second'
      where id = ${ids[1]}`;
    assertEquals((await api.post(CONNECT, ok, acme.sk)).status, 200);
    assertEquals((await api.post(CONNECT, ok, acme.sk)).status, 429);
  } finally {
    await api.close();
  }
});

Deno.test("concurrent connects of one key overshoot the pending limit by at most the reservations in flight", async () => {
  const api = await startTestApi({
    PENDING_SESSIONS_PER_KEY: "5",
    RATE_LIMIT_PER_SECOND: "0",
  });
  try {
    const acme = await makeTenant(api);
    const replies = await Promise.all(
      [...Array(40)].map(() => api.post(CONNECT, { agent_id: acme.agent_id }, acme.sk)),
    );
    const ok = replies.filter((r) => r.status === 200).length;
    assert(
      replies.every((r) => r.status === 200 || r.body.error.code === "rate_limited"),
      JSON.stringify(replies.map((r) => r.status)),
    );
    // The count is read in the reservation's own statement: connects racing in the same instant
    // may each see room (at most one per pooled connection: 10 on PostgreSQL, 4 on PGlite).
    assert(ok >= 5 && ok <= 5 + 10, `${ok} reserved`);
    const counts = await rowCounts(api.db);
    assertEquals([counts.sessions, counts.usage, counts.active], [ok, ok, ok]);
  } finally {
    await api.close();
  }
});
