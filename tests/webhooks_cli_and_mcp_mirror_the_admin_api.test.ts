// `deno task admin webhooks ...` and the webhook MCP tools reach the webhooks.* routes: an endpoint
// made through the CLI prints its secret once, is listed without it, turned off and on, and its
// delivery log read and a delivery redelivered through MCP; refusals are the route's.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { makeTenant, startTestApi, type TestApi } from "./helpers/api_server.ts";
import { sessionWriter } from "./helpers/webhook_sessions.ts";
import { newSealingKeyText } from "../common/sealed.ts";

const ROOT = new URL("..", import.meta.url).pathname;

async function admin(api: TestApi, args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--no-check", "cli/admin.ts", ...args],
    cwd: ROOT,
    env: { API_URL: api.url, ADMIN_TOKEN: api.adminToken, PATH: Deno.env.get("PATH") ?? "" },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.code === 0 ? out.stdout : out.stderr);
  let json = null;
  try {
    json = JSON.parse(text);
  } catch { /* usage text */ }
  return { code: out.code, text, json };
}

Deno.test("webhooks through the admin CLI and MCP", async () => {
  // The API's dispatcher idles: the delivery stays pending for the log to show.
  const api = await startTestApi({ TRUNK_CREDENTIALS_KEY: newSealingKeyText() }, {
    service: { webhooks: { tickMs: 3600_000 } },
  });
  const client = new Client({ name: "webhook-test", version: "1.0.0" });
  try {
    const acme = await makeTenant(api, "acme");
    const made = await admin(api, [
      ...["webhooks", "create", "--tenant", "acme", "--url", "https://crm.example.com/voice"],
      ...["--event", "session.started", "--description", "CRM"],
    ]);
    assertEquals(made.code, 0, made.text);
    assertMatch(made.json.secret, /^whsec_/);
    const id = made.json.endpoint.endpoint_id;
    assertEquals(made.json.endpoint.event_types, ["session.started"]);
    const refused = await admin(api, [
      ...["webhooks", "create", "--agent-id", acme.agent_id, "--url", "http://crm.example.com/"],
    ]);
    assertEquals(refused.code, 1);
    assertEquals(refused.json.error.details.field, "url");
    const badEvent = await admin(api, [
      ...["webhooks", "create", "--tenant", "acme", "--url", "https://x.example.com/"],
      ...["--event", "session.finished"],
    ]);
    assertEquals([badEvent.code, badEvent.json.error.details.field], [1, "event_types.0"]);
    const listed = await admin(api, ["webhooks", "list", "--tenant", "acme"]);
    assertEquals(listed.json.endpoints.map((e: { endpoint_id: string }) => e.endpoint_id), [id]);
    assert(!listed.text.includes(made.json.secret.slice(6)), "the secret was shown again");
    const off = await admin(api, ["webhooks", "update", "--endpoint-id", id, "--no-enabled"]);
    assertEquals(off.json.endpoint.enabled, false);
    // Off: a session's start queues nothing for it.
    const writer = await sessionWriter(api.db.sql, acme);
    await writer.start();
    const on = await admin(api, ["webhooks", "update", "--endpoint-id", id, "--enabled"]);
    assertEquals(on.json.endpoint.enabled, true);
    const s = await writer.start();
    await writer.end(s); // session.ended is not among its events

    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${api.adminToken}` } },
      }),
    );
    const log = await client.callTool({
      name: "list_webhook_deliveries",
      arguments: { endpoint_id: id },
    }) as CallToolResult;
    const deliveries = (log.structuredContent as {
      deliveries: { delivery_id: string; type: string; session_id: string }[];
    }).deliveries;
    assertEquals(deliveries.map((d) => [d.type, d.session_id]), [["session.started", s]]);
    const again = await client.callTool({
      name: "redeliver_webhook",
      arguments: { delivery_id: deliveries[0].delivery_id },
    }) as CallToolResult;
    assert(!again.isError, JSON.stringify(again.content));
    const cli = await admin(api, [
      ...["webhooks", "redeliver", "--delivery-id", deliveries[0].delivery_id],
    ]);
    assertEquals(cli.json.delivery.status, "pending");
    const gone = await admin(api, ["webhooks", "delete", "--endpoint-id", id]);
    assertEquals(gone.json, { deleted: true });
    const after = await admin(api, ["webhooks", "deliveries", "--endpoint-id", id]);
    assertEquals([after.code, after.json.error.code], [1, "webhook_not_found"]);
  } finally {
    await client.close();
    await api.close();
  }
});
