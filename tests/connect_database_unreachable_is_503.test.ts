// When the database goes away, connect answers 503 `unavailable` in the envelope, not a 500.
import { assertEquals } from "./helpers/assert.ts";
import { makeTenant, startTestApi } from "./helpers/api_server.ts";
import { freshDatabase } from "./helpers/database.ts";
import { openDatabase } from "../db/client.ts";
import { switchableProxy } from "./helpers/switchable_proxy.ts";

Deno.test("connect gives 503 unavailable when the database cannot be reached", async () => {
  const real = await freshDatabase();
  const target = new URL(real.url);
  const proxy = switchableProxy(Number(target.port || 5432));
  const viaProxy = new URL(real.url);
  viaProxy.hostname = "127.0.0.1";
  viaProxy.port = String(proxy.port);
  const db = await openDatabase({ url: viaProxy.toString(), max: 2 });
  const api = await startTestApi({}, { db });
  const acme = await makeTenant(api);
  assertEquals(
    (await api.post("/api/v1/sessions.connect", { agent_id: acme.agent_id }, acme.sk)).status,
    200,
  );

  proxy.cut();
  // The key is cached, so this reaches the session write; an uncached key fails at lookup.
  for (const key of [acme.sk, "sk_" + "z".repeat(32)]) {
    const r = await api.post("/api/v1/sessions.connect", { agent_id: acme.agent_id }, key);
    assertEquals(r.status, 503, JSON.stringify(r.body));
    assertEquals(r.body.error.code, "unavailable");
    assertEquals(r.body.info, r.body.error.message);
  }
  const health = await fetch(`${api.url}/healthz`);
  assertEquals(health.status, 503);
  await health.body?.cancel();

  await api.close();
  await db.close();
  await real.close();
});
