// Both key paths and CORS: a pk_ key from an allowlisted page origin, an sk_ key from a server,
// CORS on sessions.connect only, and what each credential may not do.
import { assert, assertEquals } from "./helpers/assert.ts";
import { makeTenant, PAGE_ORIGIN, startTestApi } from "./helpers/api_server.ts";

const CONNECT = "/api/v1/sessions.connect";

Deno.test("auth paths", async (t) => {
  const api = await startTestApi();
  const acme = await makeTenant(api, "acme", {
    origins: [PAGE_ORIGIN, "https://shop.acme.example"],
  });
  const ok = { agent_id: acme.agent_id };

  await t.step("path B: sk_ from a server (no Origin) gets connect parameters", async () => {
    const r = await api.post(CONNECT, ok, acme.sk);
    assertEquals(r.status, 200);
    assertEquals(Object.keys(r.body).sort(), ["session_id", "webrtc_request_params"]);
    assertEquals(Object.keys(r.body.webrtc_request_params).sort(), ["endpoint", "headers"]);
    assert(r.body.webrtc_request_params.headers.Authorization.startsWith("Bearer ey"));
    assertEquals(
      r.body.webrtc_request_params.endpoint,
      `http://127.0.0.1:9/worker/sessions/${r.body.session_id}/offer`,
    );
  });

  await t.step("path A: pk_ from an allowlisted origin, with CORS headers", async () => {
    const r = await api.post(CONNECT, ok, acme.pk, { origin: "https://SHOP.acme.example" });
    assertEquals(r.status, 200);
    assertEquals(r.headers.get("access-control-allow-origin"), "https://SHOP.acme.example");
    assert(r.headers.get("access-control-expose-headers")?.includes("X-Correlation-Id"));
  });

  await t.step("the CORS preflight of sessions.connect is open to any origin", async () => {
    const res = await fetch(api.url + CONNECT, {
      method: "OPTIONS",
      headers: {
        origin: "https://anyone.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization,content-type",
      },
    });
    await res.body?.cancel();
    assert(res.status === 204 || res.status === 200);
    assertEquals(res.headers.get("access-control-allow-origin"), "https://anyone.example");
    assert(res.headers.get("access-control-allow-methods")?.includes("POST"));
    assert(
      res.headers.get("access-control-allow-headers")?.toLowerCase().includes("authorization"),
    );
  });

  await t.step(
    "refusals on sessions.connect also carry CORS so the page can read them",
    async () => {
      const r = await api.post(CONNECT, ok, acme.pk, { origin: "https://evil.example" });
      assertEquals(r.status, 403);
      assertEquals(r.headers.get("access-control-allow-origin"), "https://evil.example");
    },
  );

  // The public capabilities do answer CORS (capabilities_are_readable_from_any_origin.test.ts).
  await t.step("credentialed routes other than connect send no CORS headers", async () => {
    for (const path of ["/api/v1/sessions.get", "/api/v1/agents.list"]) {
      const res = await fetch(api.url + path, {
        method: "POST",
        headers: { origin: PAGE_ORIGIN, authorization: `Bearer ${api.adminToken}` },
        body: "{}",
      });
      await res.body?.cancel();
      assertEquals(res.headers.get("access-control-allow-origin"), null, path);
    }
  });

  await t.step("a pk_ key can start calls and do nothing else", async () => {
    for (
      const path of ["/api/v1/sessions.get", "/api/v1/sessions.list", "/api/v1/sessions.create"]
    ) {
      const r = await api.post(path, { session_id: "x", agent_id: acme.agent_id }, acme.pk, {
        origin: PAGE_ORIGIN,
      });
      assertEquals(r.status, 403, path);
      assertEquals(r.body.error.code, "forbidden");
    }
    const r = await api.post("/api/v1/agents.list", {}, acme.pk);
    assertEquals([r.status, r.body.error.code], [403, "forbidden"]);
  });

  await t.step("an sk_ key cannot use the admin routes", async () => {
    const r = await api.post("/api/v1/agents.create", {
      tenant: "x",
      name: "x",
      brain_url: "wss://x",
    }, acme.sk);
    assertEquals([r.status, r.body.error.code], [403, "forbidden"]);
  });

  await t.step("the admin token is not an API key for sessions.connect", async () => {
    const r = await api.post(CONNECT, ok, api.adminToken);
    assertEquals([r.status, r.body.error.code], [401, "invalid_api_key"]);
  });

  await t.step("every response carries X-Correlation-Id; a supplied one is echoed", async () => {
    const r = await api.post(CONNECT, ok, acme.sk, { "x-correlation-id": "trace-1234-abcd" });
    assertEquals(r.headers.get("x-correlation-id"), "trace-1234-abcd");
    const res = await fetch(`${api.url}/healthz`);
    await res.body?.cancel();
    assert(res.headers.get("x-correlation-id")?.startsWith("cor_"));
  });

  await api.close();
});
