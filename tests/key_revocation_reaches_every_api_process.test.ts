// A revoked key stops working within one second on every API process, including one that had
// the key cached, because revocation is broadcast with LISTEN/NOTIFY.
import { assert, assertEquals } from "./helpers/assert.ts";
import { makeTenant, readReply, startTestApi } from "./helpers/api_server.ts";
import { freePort, spawnDeno, waitHealthy } from "./helpers/process.ts";

Deno.test("a revoked key is refused by a second API process within one second", async () => {
  const api = await startTestApi();
  const acme = await makeTenant(api);
  const port = freePort();
  const other = spawnDeno("api/main.ts", {
    DATABASE_URL: api.db.url,
    API_PORT: String(port),
    ADMIN_TOKEN: api.adminToken,
  });
  try {
    const otherUrl = `http://127.0.0.1:${port}`;
    await waitHealthy(`${otherUrl}/healthz`, other);
    const connectOther = async () =>
      readReply(
        await fetch(`${otherUrl}/api/v1/sessions.connect`, {
          method: "POST",
          headers: { authorization: `Bearer ${acme.sk}`, "content-type": "application/json" },
          body: JSON.stringify({ agent_id: acme.agent_id }),
        }),
      );
    // Warm the other process's cache with the key.
    assertEquals((await connectOther()).status, 200);
    assertEquals((await connectOther()).status, 200);

    const revoked = await api.admin("/api/v1/keys.revoke", { key_id: acme.sk_key_id });
    assertEquals(revoked.status, 200);
    assert(revoked.body.key.revoked_at);
    const start = performance.now();
    let reply = await connectOther();
    while (reply.status === 200 && performance.now() - start < 1000) {
      await new Promise((r) => setTimeout(r, 25));
      reply = await connectOther();
    }
    assertEquals(reply.status, 401, "still accepted one second after revocation");
    assertEquals(reply.body.error.code, "invalid_api_key");
    // And on the process that revoked it, at once.
    const here = await api.post("/api/v1/sessions.connect", { agent_id: acme.agent_id }, acme.sk);
    assertEquals(here.status, 401);
  } finally {
    await other.stop();
    await api.close();
  }
});
