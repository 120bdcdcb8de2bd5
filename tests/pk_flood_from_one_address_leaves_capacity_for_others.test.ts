// The showcase. A publishable key is public, and its Origin check binds only browsers: a
// script can send a thousand connects with it and never make a call. With the production
// defaults, such a flood reserves only a few slots, and only for the pre-offer hold, so a server
// with a secret key (another client) still gets a worker, and so does a visitor from another
// address on the same key. From a thousand addresses, the per-key limit of sessions waiting for
// their offer still caps what the key can hold.
import { assert, assertEquals } from "./helpers/assert.ts";
import {
  makeTenant,
  PAGE_ORIGIN,
  readReply,
  type Reply,
  startTestApi,
  type TestApi,
} from "./helpers/api_server.ts";
import { registerNode } from "../db/nodes.ts";
import { loadSettings } from "../common/settings.ts";

const CONNECT = "/api/v1/sessions.connect";
const FLOOD = 1000;
const defaults = loadSettings({});

/** `n` requests, `parallel` at a time. */
async function flood(n: number, parallel: number, one: (i: number) => Promise<Reply>) {
  const replies: Reply[] = [];
  let next = 0;
  await Promise.all(
    [...Array(parallel)].map(async () => {
      while (next < n) replies.push(await one(next++));
    }),
  );
  return replies;
}

async function pkConnect(api: TestApi, pk: string, agentId: string, headers = {}) {
  return readReply(
    await fetch(api.url + CONNECT, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${pk}`,
        origin: PAGE_ORIGIN,
        ...headers,
      },
      body: JSON.stringify({ agent_id: agentId }),
    }),
  );
}

function tally(replies: Reply[]) {
  const seen: Record<string, number> = {};
  for (const r of replies) {
    const tag = `${r.status} ${r.body?.error?.code ?? ""}`.trim();
    seen[tag] = (seen[tag] ?? 0) + 1;
  }
  return seen;
}

/** One worker node of the default capacity (WORKER_CAPACITY, 50). */
async function oneWorker(api: TestApi) {
  await registerNode(api.db.sql, {
    node_id: "node-only",
    offer_base_url: "http://127.0.0.1:9/worker",
    capacity: defaults.workerCapacity,
  });
  return async () =>
    (await api.db.sql`select active_calls from worker_nodes where id = 'node-only'`)[0]
      .active_calls as number;
}

Deno.test("1,000 pk_ connects from one address leave the workers to other clients", async () => {
  const api = await startTestApi({}, { node: false }); // the production defaults
  try {
    const load = await oneWorker(api);
    const leaked = await makeTenant(api, "acme");
    const other = await makeTenant(api, "globex");
    const started = Date.now();

    const replies = await flood(FLOOD, 50, () => pkConnect(api, leaked.pk, leaked.agent_id));
    const seen = tally(replies);
    const elapsed = (Date.now() - started) / 1000;
    const ok = seen["200"] ?? 0;
    assertEquals(ok + (seen["429 rate_limited"] ?? 0), FLOOD, JSON.stringify(seen));
    // The burst, plus what the per-address rate refills while the flood lasts.
    const allowed = defaults.rateLimitPerAddressBurst +
      Math.ceil(elapsed * defaults.rateLimitPerAddressPerSecond);
    assert(ok >= 1 && ok <= allowed, `${ok} of ${FLOOD} got a slot in ${elapsed} s`);
    assert(
      replies.filter((r) => r.status === 429).every((r) =>
        Number(r.headers.get("retry-after")) >= 1
      ),
      "every refusal says when to retry",
    );
    const [rows] = await api.db.sql`select (select count(*)::int from sessions) as sessions,
      (select count(*)::int from usage) as usage`;
    assertEquals([rows.sessions, rows.usage, await load()], [ok, ok, ok], "refusals wrote nothing");

    // A server with a secret key gets a worker at once, and so does the same page's key from
    // another visitor's address.
    const sk = await api.post(CONNECT, { agent_id: other.agent_id }, other.sk);
    assertEquals(sk.status, 200, JSON.stringify(sk.body));
    assert(sk.body.webrtc_request_params.endpoint.startsWith("http://127.0.0.1:9/worker/"));
    const client = Deno.createHttpClient({ localAddress: "127.0.0.2" });
    try {
      const visitor = await readReply(
        await fetch(api.url + CONNECT, {
          method: "POST",
          client,
          headers: {
            "content-type": "application/json",
            authorization: `Bearer ${leaked.pk}`,
            origin: PAGE_ORIGIN,
          },
          body: JSON.stringify({ agent_id: leaked.agent_id }),
        }),
      );
      assertEquals(visitor.status, 200, JSON.stringify(visitor.body));
    } finally {
      client.close();
    }
    assertEquals((await api.post(CONNECT, { agent_id: leaked.agent_id }, leaked.sk)).status, 200);
    assert(Date.now() - started < 15_000, "the flood is over in seconds");
  } finally {
    await api.close();
  }
});

Deno.test("1,000 pk_ connects from 1,000 addresses hold at most the key's pending limit", async () => {
  // The flood comes through a trusted proxy that forwards a different client address each time.
  const api = await startTestApi({ TRUSTED_PROXIES: "127.0.0.1" }, { node: false });
  try {
    const load = await oneWorker(api);
    const leaked = await makeTenant(api, "acme");
    const other = await makeTenant(api, "globex");
    const replies = await flood(
      FLOOD,
      50,
      (i) =>
        pkConnect(api, leaked.pk, leaked.agent_id, {
          "x-forwarded-for": `198.51.${100 + (i >> 8)}.${i & 255}`,
        }),
    );
    const seen = tally(replies);
    const ok = seen["200"] ?? 0;
    assertEquals(ok + (seen["429 rate_limited"] ?? 0), FLOOD, JSON.stringify(seen));
    const limits = new Set(
      replies.filter((r) => r.status === 429).map((r) => r.body.error.details.limit),
    );
    assert(limits.has("pending_sessions"), JSON.stringify([...limits]));
    // PENDING_SESSIONS_PER_KEY, give or take the reservations racing in one instant.
    assert(
      ok >= defaults.pendingSessionsPerKey && ok <= defaults.pendingSessionsPerKey + 10,
      `${ok} held`,
    );
    assert(await load() < defaults.workerCapacity, "the key cannot fill the worker");
    const sk = await api.post(CONNECT, { agent_id: other.agent_id }, other.sk);
    assertEquals(sk.status, 200, JSON.stringify(sk.body));
  } finally {
    await api.close();
  }
});
