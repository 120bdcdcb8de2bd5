// A refused connect shows in the API process's own output: a bad key (401) and a publishable key
// used from an origin it does not allow (403) are each logged with their code, the client address,
// the origin and the credential's kind, never the key itself. A flood of refusals writes a few
// lines a minute, not one per request; an accepted connect writes no refusal.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { freshDatabase } from "./helpers/database.ts";
import { freePort, spawnDeno, waitHealthy } from "./helpers/process.ts";
import { LINES_PER_WINDOW } from "../api/connect/refusal_log.ts";

Deno.test("refused connects are logged by code and origin, without the key, a few a minute", async () => {
  const db = await freshDatabase();
  const port = freePort();
  const token = "adm_refusal_log_test_0123456789";
  const api = spawnDeno("api/main.ts", {
    DATABASE_URL: db.url,
    API_PORT: String(port),
    ADMIN_TOKEN: token,
    RATE_LIMIT_PER_ADDRESS_PER_SECOND: "0",
  });
  const base = `http://127.0.0.1:${port}`;
  const post = async (path: string, body: unknown, credential: string, origin?: string) => {
    const res = await fetch(`${base}${path}`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${credential}`,
        "content-type": "application/json",
        ...(origin ? { origin } : {}),
      },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  };
  const refusals = () => api.output().split("\n").filter((l) => l.includes("connect refused"));
  try {
    await waitHealthy(`${base}/readyz`, api);
    const made = await post("/api/v1/agents.create", {
      tenant: "acme",
      name: "Refusals",
      brain_url: "echo:",
    }, token);
    assertEquals(made.status, 200);
    const agent = made.body.agent.agent_id;
    const pk = await post("/api/v1/keys.create", {
      agent_id: agent,
      kind: "publishable",
      allowed_origins: ["https://shop.example.test"],
    }, token);
    const key = pk.body.session_key as string;

    const wrongOrigin = await post(
      "/api/v1/sessions.connect",
      { agent_id: agent },
      key,
      "https://evil.example.test",
    );
    assertEquals(wrongOrigin.status, 403);
    const badKey = "pk_" + "x".repeat(40);
    assertEquals((await post("/api/v1/sessions.connect", { agent_id: agent }, badKey)).status, 401);
    // (An accepted credential is not a refusal, whatever the rest of the answer.)
    await post("/api/v1/sessions.connect", { agent_id: agent }, key, "https://shop.example.test");

    let lines: string[] = [];
    for (let i = 0; i < 50 && lines.length < 2; i++) {
      await new Promise((r) => setTimeout(r, 100));
      lines = refusals();
    }
    assertEquals(lines.length, 2, api.output());
    assertMatch(lines[0], /status=403 code=origin_not_allowed/);
    assertMatch(lines[0], /origin=https:\/\/evil\.example\.test/);
    assertMatch(lines[0], /client=127\.0\.0\.1/);
    assertMatch(lines[0], /credential=pk_/);
    assertMatch(lines[1], /status=401 code=invalid_api_key .*credential=pk_/);
    assert(!api.output().includes(key), "the publishable key was logged");
    assert(!api.output().includes(badKey), "the presented bad key was logged");

    // A flood: a few lines, not one a request.
    for (let i = 0; i < 40; i++) {
      assertEquals(
        (await post("/api/v1/sessions.connect", { agent_id: agent }, badKey)).status,
        401,
      );
    }
    await new Promise((r) => setTimeout(r, 300));
    assertEquals(refusals().length, LINES_PER_WINDOW, api.output());
  } finally {
    await api.stop();
    await db.close();
  }
});
