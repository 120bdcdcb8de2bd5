// The API's /metrics: only with the admin token on the API's port; sessions.connect timed by
// outcome with its refusals counted by code; the worker nodes read from worker_nodes at scrape.
import { assert, assertEquals } from "../tests/helpers/assert.ts";
import { makeTenant, readReply, startTestApi, type TestApi } from "../tests/helpers/api_server.ts";
import { heartbeat, registerNode } from "../db/nodes.ts";
import { described, sample } from "../common/metrics/testing.ts";

async function scrape(api: TestApi, auth?: string): Promise<Response> {
  return await fetch(`${api.url}/metrics`, {
    headers: auth ? { authorization: `Bearer ${auth}` } : {},
  });
}

async function metricsText(api: TestApi): Promise<string> {
  const res = await scrape(api, api.adminToken);
  assertEquals(res.status, 200);
  return await res.text();
}

Deno.test("API /metrics is refused without the admin token, with a wrong one and with a key", async () => {
  const api = await startTestApi();
  try {
    const tenant = await makeTenant(api);
    for (
      const [auth, status, code] of [
        [undefined, 401, "unauthorized"],
        ["adm_not_the_token", 401, "unauthorized"],
        [tenant.sk, 403, "forbidden"],
      ] as const
    ) {
      const r = await readReply(await scrape(api, auth));
      assertEquals(r.status, status, `with ${auth}`);
      assertEquals(r.body.error.code, code);
      assert(typeof r.body.correlation_id === "string", "the error envelope");
    }
  } finally {
    await api.close();
  }
});

Deno.test("API /metrics is served with the admin token, in the Prometheus text format", async () => {
  const api = await startTestApi();
  try {
    const res = await scrape(api, api.adminToken);
    assertEquals(res.status, 200);
    assertEquals(res.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
    const text = await res.text();
    assert(described(text, "voice_connect_duration_seconds", "histogram"), text);
    assert(described(text, "voice_connect_refusals_total", "counter"));
    assert(described(text, "voice_db_pool_queries_in_flight", "gauge"));
    assert(sample(text, "voice_db_pool_max_connections", { pool: "main" })! > 0, text);
    assert(sample(text, "voice_db_pool_queries_total", { pool: "main" })! > 0, text);
    assert(sample(text, "voice_process_resident_memory_bytes")! > 0);
  } finally {
    await api.close();
  }
});

Deno.test("connects are timed by outcome and refusals counted by the code the caller got", async () => {
  const api = await startTestApi();
  try {
    const tenant = await makeTenant(api);
    const ok = await api.post("/api/v1/sessions.connect", { agent_id: tenant.agent_id }, tenant.sk);
    assertEquals(ok.status, 200, JSON.stringify(ok.body));
    assertEquals((await api.post("/api/v1/sessions.connect", {})).status, 401);
    const bad = await api.post("/api/v1/sessions.connect", {}, "sk_" + "x".repeat(32));
    assertEquals(bad.body.error.code, "invalid_api_key");
    const wrongAgent = await api.post(
      "/api/v1/sessions.connect",
      { agent_id: "ag_nobody" },
      tenant.sk,
    );
    assertEquals(wrongAgent.body.error.code, "agent_not_found");

    const text = await metricsText(api);
    assertEquals(sample(text, "voice_connect_duration_seconds_count", { outcome: "ok" }), 1);
    assertEquals(sample(text, "voice_connect_duration_seconds_count", { outcome: "refused" }), 3);
    assert(sample(text, "voice_connect_duration_seconds_sum", { outcome: "ok" })! > 0);
    assertEquals(
      sample(text, "voice_connect_duration_seconds_bucket", { outcome: "ok", le: "+Inf" }),
      1,
    );
    assertEquals(sample(text, "voice_connect_refusals_total", { code: "unauthorized" }), 1);
    assertEquals(sample(text, "voice_connect_refusals_total", { code: "invalid_api_key" }), 1);
    assertEquals(sample(text, "voice_connect_refusals_total", { code: "agent_not_found" }), 1);
    assertEquals(
      sample(text, "voice_http_requests_total", {
        method: "POST",
        route: "/api/v1/sessions.connect",
        status: "200",
      }),
      1,
    );
  } finally {
    await api.close();
  }
});

Deno.test("requests are counted by route pattern and status; a path no route serves is unmatched", async () => {
  const api = await startTestApi();
  try {
    await (await fetch(`${api.url}/no/such/path/123`)).body?.cancel();
    await (await fetch(`${api.url}/api/v1/capabilities`)).body?.cancel();
    const missing = await api.admin("/api/v1/sessions.get", { session_id: "ses_nope" });
    assertEquals(missing.status, 404);
    const text = await metricsText(api);
    assertEquals(
      sample(text, "voice_http_requests_total", { route: "unmatched", status: "404" }),
      1,
      text,
    );
    assertEquals(
      sample(text, "voice_http_requests_total", {
        method: "GET",
        route: "/api/v1/capabilities",
        status: "200",
      }),
      1,
    );
    assertEquals(
      sample(text, "voice_http_requests_total", { route: "/api/v1/sessions.get", status: "404" }),
      1,
    );
    assert(!text.includes("/no/such/path"), "paths never become labels");
  } finally {
    await api.close();
  }
});

Deno.test("each worker node's calls, capacity, draining and liveness are read from worker_nodes", async () => {
  const api = await startTestApi({}, { node: false });
  try {
    await registerNode(api.db.sql, {
      node_id: "node-a",
      offer_base_url: "http://127.0.0.1:9/a",
      capacity: 7,
    });
    await registerNode(api.db.sql, {
      node_id: "node-b",
      offer_base_url: "http://127.0.0.1:9/b",
      capacity: 3,
    });
    await heartbeat(api.db.sql, "node-b", { draining: true });
    await api.db.sql`update worker_nodes set active_calls = 2 where id = 'node-a'`;
    await api.db.sql`update worker_nodes set heartbeat_at = now() - interval '1 hour'
      where id = 'node-b'`;
    const text = await metricsText(api);
    assertEquals(sample(text, "voice_node_capacity", { node_id: "node-a" }), 7);
    assertEquals(sample(text, "voice_node_capacity", { node_id: "node-b" }), 3);
    assertEquals(sample(text, "voice_node_active_calls", { node_id: "node-a" }), 2);
    assertEquals(sample(text, "voice_node_active_calls", { node_id: "node-b" }), 0);
    assertEquals(sample(text, "voice_node_draining", { node_id: "node-a" }), 0);
    assertEquals(sample(text, "voice_node_draining", { node_id: "node-b" }), 1);
    assertEquals(sample(text, "voice_node_live", { node_id: "node-a" }), 1);
    assertEquals(sample(text, "voice_node_live", { node_id: "node-b" }), 0);
  } finally {
    await api.close();
  }
});
