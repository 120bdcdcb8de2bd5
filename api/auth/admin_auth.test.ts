// Every route of the admin group (read from api/admin/routes.ts, so a route added there is
// covered) refuses all but the admin token with today's codes and messages, and a refused
// request changes nothing; routes beside the group under /api/v1 stay as open as they were.
import { assertEquals } from "../../tests/helpers/assert.ts";
import {
  makeTenant,
  readReply,
  startTestApi,
  type TestApi,
} from "../../tests/helpers/api_server.ts";
import { adminRoutes } from "../admin/routes.ts";
import { enqueueRecordingStored } from "../../db/webhook_outbox.ts";
import { newSealingKeyText } from "../../common/sealed.ts";

/** Everything an admin route could write, as text, to compare before and after. */
async function managedRows(api: TestApi): Promise<string> {
  const tables = [
    "workspaces",
    "agents",
    "api_keys",
    "trunks",
    "phone_numbers",
    "sessions",
    "campaigns",
    "campaign_contacts",
    "agent_redaction",
    "agent_storage",
    "webhook_endpoints",
    "webhook_events",
    "webhook_deliveries",
  ];
  const rows = [];
  for (const table of tables) {
    rows.push(await api.db.sql.unsafe(`select to_jsonb(t) as row from ${table} t order by 1`));
  }
  return JSON.stringify(rows);
}

async function call(api: TestApi, method: string, path: string, body: unknown, auth?: string) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (auth !== undefined) headers.authorization = auth;
  const init = method === "GET"
    ? { method, headers }
    : { method, headers, body: JSON.stringify(body) };
  return await readReply(await fetch(api.url + path, init));
}

Deno.test("every admin route refuses all but the admin token and a refused request changes nothing", async (t) => {
  // The service's own loops write too (the webhook dispatcher tries the delivery below and records
  // its failure, the campaign scheduler dials): they are held off, so a row that changes changed
  // by a request. CI once saw the dispatcher's attempt land between the two snapshots.
  const hour = 3_600_000;
  const api = await startTestApi({ TRUNK_CREDENTIALS_KEY: newSealingKeyText() }, {
    service: {
      sweepMs: hour,
      campaignTickMs: hour,
      webhooks: { tickMs: hour },
      storageTickMs: hour,
    },
  });
  try {
    const acme = await makeTenant(api, "acme");
    const doomed = await makeTenant(api, "doomed");
    const spare = await makeTenant(api, "spare");
    const trunk = (await api.admin("/api/v1/trunks.create", {
      name: "carrier",
      allowed_sources: ["192.0.2.0/24"],
    })).body.trunk;
    const doomedTrunk = (await api.admin("/api/v1/trunks.create", {
      name: "old carrier",
      allowed_sources: ["192.0.2.0/24"],
    })).body.trunk;
    for (const number of ["+14155550100", "+14155550101"]) {
      await api.admin("/api/v1/numbers.create", { number, agent_id: acme.agent_id });
    }
    const campaign = { agent_id: acme.agent_id, name: "dues", from: "+14155550100" };
    const contacts = [{ number: "+919810000000" }];
    const campaignId = (await api.admin("/api/v1/campaigns.create", { ...campaign, contacts }))
      .body.campaign.campaign_id;
    const endpoint = (await api.admin("/api/v1/webhooks.create", {
      tenant: "acme",
      url: "http://127.0.0.1:9/hooks",
    })).body.endpoint;
    await enqueueRecordingStored(api.db.sql, acme.workspace_id, {
      session_id: "ses_admin_auth",
      agent_id: acme.agent_id,
      url: "s3://bucket/ses_admin_auth.wav",
      content_type: "audio/wav",
      bytes: 44,
      duration_seconds: 0,
    });
    const [delivery] = await api.db.sql<{ id: string }[]>`
      select id::text from webhook_deliveries where endpoint_id = ${endpoint.endpoint_id}`;
    // A request each route accepts from the admin token (shown in the last step): refused, it
    // would have written something were the guard missing.
    const accepted: Record<string, unknown> = {
      "/api/v1/agents.create": { tenant: "acme", name: "Sales", brain_url: "wss://b.example/v" },
      "/api/v1/agents.list": {},
      "/api/v1/agents.get": { agent_id: acme.agent_id },
      "/api/v1/agents.update": { agent_id: acme.agent_id, name: "Renamed" },
      "/api/v1/agents.delete": { agent_id: doomed.agent_id },
      "/api/v1/trunks.create": { name: "new carrier", allowed_sources: ["198.51.100.0/24"] },
      "/api/v1/trunks.list": {},
      "/api/v1/trunks.get": { trunk_id: trunk.trunk_id },
      "/api/v1/trunks.update": { trunk_id: trunk.trunk_id, name: "renamed carrier" },
      "/api/v1/trunks.delete": { trunk_id: doomedTrunk.trunk_id },
      "/api/v1/numbers.create": { number: "+14155550102", agent_id: acme.agent_id },
      "/api/v1/numbers.list": {},
      "/api/v1/numbers.get": { number: "+14155550100" },
      "/api/v1/numbers.update": { number: "+14155550100", enabled: false },
      "/api/v1/numbers.delete": { number: "+14155550101" },
      "/api/v1/campaigns.create": { ...campaign, contacts },
      "/api/v1/campaigns.list": {},
      "/api/v1/campaigns.get": { campaign_id: campaignId },
      "/api/v1/campaigns.pause": { campaign_id: campaignId },
      "/api/v1/campaigns.resume": { campaign_id: campaignId },
      "/api/v1/campaigns.cancel": { campaign_id: campaignId },
      "/api/v1/campaigns.contacts": { campaign_id: campaignId },
      "/api/v1/campaigns.attempts": { campaign_id: campaignId },
      "/api/v1/keys.create": { agent_id: acme.agent_id, kind: "secret" },
      "/api/v1/keys.list": { agent_id: acme.agent_id },
      "/api/v1/keys.revoke": { key_id: spare.pk_key_id },
      "/api/v1/agents.redaction.get": { agent_id: acme.agent_id },
      "/api/v1/agents.redaction.set": { agent_id: acme.agent_id, categories: ["card"] },
      "/api/v1/storage.set": { agent_id: acme.agent_id, retention_days: 30 },
      "/api/v1/storage.get": { agent_id: acme.agent_id },
      "/api/v1/storage.remove": { agent_id: acme.agent_id },
      "/api/v1/webhooks.create": { tenant: "acme", url: "http://127.0.0.1:9/other" },
      "/api/v1/webhooks.list": {},
      "/api/v1/webhooks.get": { endpoint_id: endpoint.endpoint_id },
      "/api/v1/webhooks.update": { endpoint_id: endpoint.endpoint_id, description: "CRM" },
      "/api/v1/webhooks.deliveries": { endpoint_id: endpoint.endpoint_id },
      "/api/v1/webhooks.attempts": { delivery_id: delivery.id },
      "/api/v1/webhooks.redeliver": { delivery_id: delivery.id },
      "/api/v1/webhooks.delete": { endpoint_id: endpoint.endpoint_id },
      "/metrics": undefined,
    };
    const routes = adminRoutes(api.deps).routes;
    const missing = routes.filter((r) => !(r.path in accepted)).map((r) => r.path);
    assertEquals(missing, [], "each admin route needs a request it accepts in this test");

    const refusals: [string, string | undefined, number, string, string][] = [
      ["no credential", undefined, 401, "unauthorized", "Send Authorization: Bearer <API key>."],
      [
        "not a bearer",
        "Basic YWRtaW46eA==",
        401,
        "unauthorized",
        "Send Authorization: Bearer <API key>.",
      ],
      [
        "a wrong token",
        "Bearer adm_not_the_token",
        401,
        "unauthorized",
        "The admin token is not valid.",
      ],
      [
        "a secret key",
        `Bearer ${acme.sk}`,
        403,
        "forbidden",
        "This operation needs the admin token.",
      ],
      [
        "a publishable key",
        `Bearer ${acme.pk}`,
        403,
        "forbidden",
        "This operation needs the admin token.",
      ],
    ];
    const before = await managedRows(api);
    for (const { method, path } of routes) {
      await t.step(`${method} ${path} is refused`, async () => {
        for (const [what, auth, status, code, message] of refusals) {
          const r = await call(api, method, path, accepted[path], auth);
          assertEquals([r.status, r.body.error?.code, r.body.error?.message], [
            status,
            code,
            message,
          ], `${what}`);
          assertEquals(typeof r.body.correlation_id, "string", "the error envelope");
        }
      });
    }
    assertEquals(await managedRows(api), before, "a refused request wrote something");

    await t.step("the same requests with the admin token are accepted", async () => {
      for (const { method, path } of routes) {
        const r = await call(api, method, path, accepted[path], `Bearer ${api.adminToken}`);
        assertEquals(r.status, 200, `${method} ${path}: ${JSON.stringify(r.body)}`);
      }
      assertEquals((await managedRows(api)) === before, false);
    });
  } finally {
    await api.close();
  }
});

Deno.test("the admin guard covers only its group's routes: the rest of /api/v1 is as open as before", async () => {
  const api = await startTestApi();
  try {
    assertEquals((await call(api, "GET", "/api/v1/capabilities", undefined)).status, 200);
    const unknown = await call(api, "POST", "/api/v1/nothing.here", {});
    assertEquals([unknown.status, unknown.body.error.code], [404, "not_found"]);
    const wrongMethod = await call(api, "GET", "/api/v1/agents.list", undefined);
    assertEquals([wrongMethod.status, wrongMethod.body.error.code], [404, "not_found"]);
    const connect = await call(api, "POST", "/api/v1/sessions.connect", {});
    assertEquals([connect.status, connect.body.error.message], [
      401,
      "Send Authorization: Bearer <API key>.",
    ]);
  } finally {
    await api.close();
  }
});
