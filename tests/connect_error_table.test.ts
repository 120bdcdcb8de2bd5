// Every row of the spec's error table (and the codes decisions.md adds), through the real HTTP
// server against a real database, each checked to have written nothing.
import { assert, assertEquals } from "./helpers/assert.ts";
import {
  makeTenant,
  PAGE_ORIGIN,
  type Reply,
  rowCounts,
  startTestApi,
  type TestApi,
} from "./helpers/api_server.ts";
import { heartbeat, registerNode } from "../db/nodes.ts";

const CONNECT = "/api/v1/sessions.connect";

function assertEnvelope(r: Reply, status: number, code: string) {
  assertEquals(r.status, status, JSON.stringify(r.body));
  assertEquals(r.body.error.code, code);
  assertEquals(typeof r.body.error.message, "string");
  assertEquals(r.body.info, r.body.error.message);
  assert(typeof r.body.error.details === "object" && r.body.error.details !== null);
  assert(r.body.correlation_id?.length > 8);
  assertEquals(r.headers.get("x-correlation-id"), r.body.correlation_id);
}

/** Runs a refused request and checks the envelope and that no row changed. */
async function refusedWithoutWrites(
  api: TestApi,
  send: () => Promise<Reply>,
  status: number,
  code: string,
): Promise<Reply> {
  const before = await rowCounts(api.db);
  const reply = await send();
  assertEnvelope(reply, status, code);
  assertEquals(await rowCounts(api.db), before, "a refused request wrote rows");
  return reply;
}

Deno.test("connect error table", async (t) => {
  const api = await startTestApi();
  const acme = await makeTenant(api, "acme");
  const globex = await makeTenant(api, "globex");
  const ok = { agent_id: acme.agent_id };

  await t.step("401 unauthorized: no Authorization header", async () => {
    await refusedWithoutWrites(api, () => api.post(CONNECT, ok), 401, "unauthorized");
  });

  await t.step("401 unauthorized: malformed Authorization header", async () => {
    for (const h of ["Basic abc", "Bearer", "Bearer a b", acme.sk]) {
      await refusedWithoutWrites(
        api,
        () => api.post(CONNECT, ok, undefined, { authorization: h }),
        401,
        "unauthorized",
      );
    }
  });

  await t.step("401 invalid_api_key: unknown key, either prefix or none", async () => {
    for (const key of ["sk_" + "x".repeat(32), "pk_" + "y".repeat(32), "nope"]) {
      await refusedWithoutWrites(
        api,
        () => api.post(CONNECT, ok, key, { origin: PAGE_ORIGIN }),
        401,
        "invalid_api_key",
      );
    }
  });

  await t.step("401 invalid_api_key: a key with its kind prefix swapped", async () => {
    await refusedWithoutWrites(
      api,
      () => api.post(CONNECT, ok, "pk_" + acme.sk.slice(3), { origin: PAGE_ORIGIN }),
      401,
      "invalid_api_key",
    );
  });

  await t.step("403 origin_not_allowed: pk_ from an origin not allowlisted", async () => {
    await refusedWithoutWrites(
      api,
      () => api.post(CONNECT, ok, acme.pk, { origin: "https://evil.example" }),
      403,
      "origin_not_allowed",
    );
  });

  await t.step("403 origin_not_allowed: pk_ with no Origin header", async () => {
    await refusedWithoutWrites(
      api,
      () => api.post(CONNECT, ok, acme.pk),
      403,
      "origin_not_allowed",
    );
  });

  await t.step("403 origin_not_allowed: pk_ with an empty allowlist fails closed", async () => {
    const made = await api.admin("/api/v1/keys.create", {
      agent_id: acme.agent_id,
      kind: "publishable",
      allowed_origins: [],
    });
    assertEquals(made.status, 200);
    await refusedWithoutWrites(
      api,
      () => api.post(CONNECT, ok, made.body.session_key, { origin: PAGE_ORIGIN }),
      403,
      "origin_not_allowed",
    );
  });

  await t.step("404 agent_not_found: agent of another workspace", async () => {
    await refusedWithoutWrites(
      api,
      () => api.post(CONNECT, { agent_id: globex.agent_id }, acme.sk),
      404,
      "agent_not_found",
    );
  });

  await t.step("404 agent_not_found: no such agent", async () => {
    await refusedWithoutWrites(
      api,
      () => api.post(CONNECT, { agent_id: "ag_doesnotexist" }, acme.sk),
      404,
      "agent_not_found",
    );
  });

  await t.step("400 recording_not_permitted: record true on a pk_ key", async () => {
    for (const body of [{ ...ok, record: true }, { ...ok, config: { record: true } }]) {
      await refusedWithoutWrites(
        api,
        () => api.post(CONNECT, body, acme.pk, { origin: PAGE_ORIGIN }),
        400,
        "recording_not_permitted",
      );
    }
  });

  await t.step("400 invalid_request: body is not JSON", async () => {
    const r = await refusedWithoutWrites(
      api,
      () => api.post(CONNECT, "{not json", acme.sk),
      400,
      "invalid_request",
    );
    assertEquals(r.body.error.details.field, "");
  });

  await t.step("400 unsupported_config names the field and what is served", async () => {
    const r = await refusedWithoutWrites(
      api,
      () => api.post(CONNECT, { ...ok, config: { tts: { voice: "VOICE_NOBODY" } } }, acme.sk),
      400,
      "unsupported_config",
    );
    assertEquals(r.body.error.details.field, "config.tts.voice");
    assertEquals(r.body.error.details.allowed, ["VOICE_ANANYA", "VOICE_ARJUN"]);
  });

  await t.step(
    "400 conflicting_fields, invalid_config, invalid_metadata, init_too_large",
    async () => {
      const cases: [unknown, string][] = [
        [{ ...ok, record: true, config: { record: false } }, "conflicting_fields"],
        [{ ...ok, config: { tts: { language: "LANGUAGE_EN" } } }, "invalid_config"],
        [{ ...ok, config: { idle: { timeout_ms: 10 } } }, "invalid_config"],
        [{ ...ok, metadata: { a: 1 } }, "invalid_metadata"],
        [{ ...ok, init: { blob: "x".repeat(17 * 1024) } }, "init_too_large"],
      ];
      for (const [body, code] of cases) {
        await refusedWithoutWrites(api, () => api.post(CONNECT, body, acme.sk), 400, code);
      }
    },
  );

  await t.step(
    "400 invalid_request: U+0000 or an unpaired surrogate anywhere (PostgreSQL refuses both)",
    async () => {
      const cases: [unknown, string][] = [
        [{ ...ok, metadata: { ".": "\u0000" } }, "metadata.."],
        [{ ...ok, display_name: "a\u0000b" }, "display_name"],
        [{ ...ok, display_name: "\ud800" }, "display_name"],
        [{ ...ok, init: { deep: [{ ["k\u0000"]: 1 }] } }, "init.deep.0.k\u0000"],
      ];
      for (const [body, field] of cases) {
        const r = await refusedWithoutWrites(
          api,
          () => api.post(CONNECT, body, acme.sk),
          400,
          "invalid_request",
        );
        assertEquals(r.body.error.details.field, field);
      }
    },
  );

  await t.step("400 invalid_request: JSON nested more than 64 levels", async () => {
    const deep = `{"agent_id":"${acme.agent_id}","init":{"x":${"[".repeat(100)}${
      "]".repeat(100)
    }}}`;
    await refusedWithoutWrites(api, () => api.post(CONNECT, deep, acme.sk), 400, "invalid_request");
    const veryDeep = `{"agent_id":${"[".repeat(20000)}${"]".repeat(20000)}}`;
    await refusedWithoutWrites(
      api,
      () => api.post(CONNECT, veryDeep, acme.sk),
      400,
      "invalid_request",
    );
  });

  await t.step("413 request_too_large: body over 64 KiB", async () => {
    const body = JSON.stringify({ ...ok, init: { blob: "x".repeat(70 * 1024) } });
    await refusedWithoutWrites(
      api,
      () => api.post(CONNECT, body, acme.sk),
      413,
      "request_too_large",
    );
  });

  await t.step("401 invalid_api_key: a revoked key", async () => {
    const made = await api.admin("/api/v1/keys.create", {
      agent_id: acme.agent_id,
      kind: "secret",
    });
    assertEquals((await api.post(CONNECT, ok, made.body.session_key)).status, 200);
    assertEquals(
      (await api.admin("/api/v1/keys.revoke", { key_id: made.body.key.key_id })).status,
      200,
    );
    await refusedWithoutWrites(
      api,
      () => api.post(CONNECT, ok, made.body.session_key),
      401,
      "invalid_api_key",
    );
  });

  await api.close();
});

Deno.test("429 rate_limited with Retry-After, per key, writing nothing", async () => {
  const api = await startTestApi({ RATE_LIMIT_PER_SECOND: "1", RATE_LIMIT_BURST: "2" });
  const acme = await makeTenant(api);
  const ok = { agent_id: acme.agent_id };
  assertEquals((await api.post(CONNECT, ok, acme.sk)).status, 200);
  assertEquals((await api.post(CONNECT, ok, acme.sk)).status, 200);
  const r = await refusedWithoutWrites(
    api,
    () => api.post(CONNECT, ok, acme.sk),
    429,
    "rate_limited",
  );
  assertEquals(r.headers.get("retry-after"), "1");
  // Another key has its own bucket.
  assertEquals((await api.post(CONNECT, ok, acme.pk, { origin: PAGE_ORIGIN })).status, 200);
  await api.close();
});

Deno.test("500 missing_connect_params keeps a failed no_worker row and mints nothing", async (t) => {
  const api = await startTestApi({ NODE_STALE_SECONDS: "2" }, { node: false });
  const acme = await makeTenant(api);
  const ok = { agent_id: acme.agent_id };

  async function noWorker() {
    const before = await rowCounts(api.db);
    const r = await api.post(CONNECT, ok, acme.sk);
    assertEnvelope(r, 500, "missing_connect_params");
    assertEquals(r.body.webrtc_request_params, undefined);
    const after = await rowCounts(api.db);
    assertEquals(
      after,
      { ...before, sessions: before.sessions + 1 },
      "only the failed session row",
    );
    const [row] = await api.db.sql`select status, end_reason, node_id, ended_at from sessions
      where id = ${r.body.error.details.session_id}`;
    assertEquals([row.status, row.end_reason, row.node_id], ["failed", "no_worker", null]);
    assert(row.ended_at instanceof Date);
  }

  await t.step("no node registered", noWorker);

  await t.step("only a draining node", async () => {
    await registerNode(api.db.sql, {
      node_id: "n-drain",
      offer_base_url: "http://127.0.0.1:1",
      capacity: 10,
    });
    await heartbeat(api.db.sql, "n-drain", { draining: true });
    await noWorker();
  });

  await t.step("only a node with a stale heartbeat", async () => {
    await registerNode(api.db.sql, {
      node_id: "n-stale",
      offer_base_url: "http://127.0.0.1:2",
      capacity: 10,
    });
    await api.db.sql`update worker_nodes set heartbeat_at = now() - interval '1 minute'
      where id = 'n-stale'`;
    await noWorker();
  });

  await t.step("only a full node: 503 workers_full with Retry-After, nothing written", async () => {
    await registerNode(api.db.sql, {
      node_id: "n-full",
      offer_base_url: "http://127.0.0.1:3",
      capacity: 0,
    });
    const before = await rowCounts(api.db);
    const r = await api.post(CONNECT, ok, acme.sk);
    assertEnvelope(r, 503, "workers_full");
    assertEquals(r.headers.get("retry-after"), "2");
    assertEquals(await rowCounts(api.db), before);
  });

  await api.close();
});
