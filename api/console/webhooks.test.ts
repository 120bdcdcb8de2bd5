// The console's webhooks pages: an endpoint made from the page shows its secret once; plain http
// elsewhere than this machine is refused on the page with nothing stored; the delivery log shows
// each attempt and the redeliver button sends a delivery again.
import { assert, assertEquals, assertMatch } from "../../tests/helpers/assert.ts";
import { makeTenant, startTestApi } from "../../tests/helpers/api_server.ts";
import { signIn } from "../../tests/helpers/console_client.ts";
import { sessionWriter } from "../../tests/helpers/webhook_sessions.ts";
import { newSealingKeyText } from "../../common/sealed.ts";

Deno.test("console webhooks pages", async () => {
  const api = await startTestApi({ TRUNK_CREDENTIALS_KEY: newSealingKeyText() }, {
    service: { webhooks: { tickMs: 50, timeoutMs: 1000 } },
  });
  const op = await signIn(api);
  try {
    const acme = await makeTenant(api, "acme");
    const refused = await op.post("/console/webhooks", {
      url: "http://crm.example.com/",
      tenant: "acme",
    });
    assertEquals(refused.status, 400);
    assertMatch(refused.html, /must be https:\/\//);
    assertEquals((await api.db.sql`select count(*)::int as n from webhook_endpoints`)[0].n, 0);

    // Port 9 on loopback: nothing listens, so every attempt fails and is logged.
    const made = await op.post("/console/webhooks", {
      url: "http://127.0.0.1:9/hooks",
      agent_id: acme.agent_id,
    });
    assertEquals(made.status, 200);
    const secret = /whsec_[A-Za-z0-9+/=]+/.exec(made.html)?.[0];
    assert(secret, "no secret shown");
    const [{ id }] = await api.db.sql`select id from webhook_endpoints`;
    const listed = await op.get("/console/webhooks");
    assert(!listed.html.includes(secret), "the secret was shown again");
    assertMatch(listed.html, /127\.0\.0\.1:9\/hooks/);

    const writer = await sessionWriter(api.db.sql, acme);
    await writer.start();
    const until = Date.now() + 10_000;
    const tried = async () =>
      (await api.db.sql`select count(*)::int as n from webhook_attempts`)[0].n;
    while (await tried() === 0) {
      if (Date.now() > until) throw new Error("no attempt logged");
      await new Promise((r) => setTimeout(r, 100));
    }
    const log = await op.get(`/console/webhooks/${id}`);
    assertMatch(log.html, /Redeliver/);
    assertMatch(log.html, /session\.started/);
    const [{ delivery_id }] = await api.db.sql`select id::text as delivery_id
      from webhook_deliveries`;
    const attempts = await op.get(`/console/webhooks/${id}?delivery=${delivery_id}`);
    assertMatch(attempts.html, /Attempts of delivery/);
    assertMatch(attempts.html, /\d+ ms/);
    const again = await op.post("/console/webhooks/redeliver", {
      endpoint_id: id,
      delivery_id,
    });
    assertEquals(again.status, 303);
    const [row] = await api.db.sql`select retry_from, status from webhook_deliveries`;
    assertEquals(row.status, "pending");
  } finally {
    await api.close();
  }
});
