// The MCP tools over streamable HTTP at /mcp, driven by the SDK's own client, against the real
// API: an agent made through MCP must be able to start a real call, and the session it makes
// must be readable back through MCP.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { readReply, startTestApi, type TestApi } from "./helpers/api_server.ts";

async function connectClient(api: TestApi, token = api.adminToken): Promise<Client> {
  const client = new Client({ name: "mcp-http-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return client;
}

async function callTool(client: Client, name: string, args: Record<string, unknown>) {
  return await client.callTool({ name, arguments: args }) as CallToolResult;
}

/** The JSON a successful tool result carries, read from its text (what every client sees). */
// deno-lint-ignore no-explicit-any
function payload(result: CallToolResult): any {
  assert(!result.isError, `tool error: ${JSON.stringify(result.content)}`);
  const first = result.content[0];
  assert(first.type === "text");
  const parsed = JSON.parse(first.text);
  assertEquals(result.structuredContent, parsed);
  return parsed;
}

Deno.test("MCP over HTTP: tools create an agent whose key starts a call, and read it back", async () => {
  const api = await startTestApi();
  const client = await connectClient(api);
  try {
    const { tools } = await client.listTools();
    assertEquals(tools.map((t: Tool) => t.name).sort(), [
      "cancel_campaign",
      "create_agent",
      "create_campaign",
      "create_key",
      "create_phone_number",
      "create_trunk",
      "create_webhook",
      "delete_agent",
      "delete_phone_number",
      "delete_trunk",
      "delete_webhook",
      "get_agent",
      "get_agent_redaction",
      "get_agent_storage",
      "get_campaign",
      "get_phone_number",
      "get_session",
      "get_trunk",
      "list_agents",
      "list_campaign_attempts",
      "list_campaign_contacts",
      "list_campaigns",
      "list_keys",
      "list_phone_numbers",
      "list_sessions",
      "list_trunks",
      "list_webhook_deliveries",
      "list_webhooks",
      "pause_campaign",
      "redeliver_webhook",
      "remove_agent_storage",
      "resume_campaign",
      "revoke_key",
      "set_agent_redaction",
      "set_agent_storage",
      "update_agent",
      "update_phone_number",
      "update_trunk",
      "update_webhook",
    ]);
    const create = tools.find((t: Tool) => t.name === "create_agent")!;
    assertEquals([...(create.inputSchema.required ?? [])].sort(), ["brain_url", "name", "tenant"]);

    const made = payload(
      await callTool(client, "create_agent", {
        tenant: "acme",
        name: "Support",
        brain_url: "wss://brain.example.test/voice",
        record_by_default: true,
        interruption_sensitivity: "low",
      }),
    );
    assertMatch(made.session_key, /^sk_/);
    assertEquals(made.agent.name, "Support");
    assertEquals(made.agent.record_by_default, true);
    assertEquals(made.agent.interruption_sensitivity, "low");
    const agentId = made.agent.agent_id;

    // The key minted through MCP is a real key: it starts a call.
    const connected = await api.post(
      "/api/v1/sessions.connect",
      { agent_id: agentId },
      made.session_key,
    );
    assertEquals(connected.status, 200, JSON.stringify(connected.body));
    const sessionId = connected.body.session_id;

    const listed = payload(await callTool(client, "list_agents", { tenant: "acme" }));
    assertEquals(listed.agents.map((a: { agent_id: string }) => a.agent_id), [agentId]);
    const otherTenant = payload(await callTool(client, "list_agents", { tenant: "globex" }));
    assertEquals(otherTenant.agents, []);

    const session = payload(await callTool(client, "get_session", { session_id: sessionId }));
    assertEquals(session.session_id, sessionId);
    assertEquals(session.agent_id, agentId);
    assertEquals(session.status, "created");

    const sessions = payload(
      await callTool(client, "list_sessions", { agent_id: agentId, status: "created", limit: 10 }),
    );
    assertEquals(sessions.sessions.map((s: { session_id: string }) => s.session_id), [sessionId]);
    assertEquals(sessions.next_cursor, null);
  } finally {
    await client.close();
    await api.close();
  }
});

Deno.test("MCP over HTTP: agents read, changed and deleted and keys made, listed and revoked, refused as the admin API refuses", async () => {
  const api = await startTestApi();
  const client = await connectClient(api);
  const origin = "https://shop.example.test";
  const connect = (agentId: string, key: string) =>
    fetch(`${api.url}/api/v1/sessions.connect`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, origin, "content-type": "application/json" },
      body: JSON.stringify({ agent_id: agentId }),
    }).then(async (r) => (await r.body?.cancel(), r.status));
  try {
    const made = payload(
      await callTool(client, "create_agent", {
        tenant: "acme",
        name: "Support",
        brain_url: "wss://brain.example.test/voice",
      }),
    );
    const agentId = made.agent.agent_id;
    assertEquals(
      payload(await callTool(client, "get_agent", { agent_id: agentId })).agent.name,
      "Support",
    );

    const renamed = payload(
      await callTool(client, "update_agent", { agent_id: agentId, name: "Front desk" }),
    );
    assertEquals(renamed.agent.name, "Front desk");
    // The admin route's own refusal, and nothing changed.
    const bad = await callTool(client, "update_agent", {
      agent_id: agentId,
      brain_url: "http://x",
    });
    const viaAdmin = await api.admin("/api/v1/agents.update", {
      agent_id: agentId,
      brain_url: "http://x",
    });
    assertEquals(bad.isError, true);
    assertEquals(
      JSON.parse((bad.content[1] as { text: string }).text).error.code,
      viaAdmin.body.error.code,
    );
    const after = payload(await callTool(client, "get_agent", { agent_id: agentId })).agent;
    assertEquals([after.name, after.brain_url], ["Front desk", "wss://brain.example.test/voice"]);

    const pk = payload(
      await callTool(client, "create_key", {
        agent_id: agentId,
        kind: "publishable",
        allowed_origins: [origin],
      }),
    );
    assertMatch(pk.session_key, /^pk_/);
    assertEquals(await connect(agentId, pk.session_key), 200, "the key made over MCP works");
    const badKind = await callTool(client, "create_key", { agent_id: agentId, kind: "root" });
    assertMatch((badKind.content[0] as { text: string }).text, /^invalid_request: /);
    const listed = payload(await callTool(client, "list_keys", { agent_id: agentId })).keys;
    assertEquals(listed.length, 2, "the agent's first secret key and the publishable one");
    assert(!JSON.stringify(listed).includes(pk.session_key), "a listed key never shows itself");

    const revoked = payload(await callTool(client, "revoke_key", { key_id: pk.key.key_id }));
    assert(revoked.key.revoked_at);
    assertEquals(await connect(agentId, pk.session_key), 401, "revoked over MCP: refused");

    payload(await callTool(client, "delete_agent", { agent_id: agentId }));
    assertEquals(await connect(agentId, made.session_key), 401, "a deleted agent's key is refused");
    const gone = await callTool(client, "get_agent", { agent_id: agentId });
    assertMatch((gone.content[0] as { text: string }).text, /^agent_not_found: /);
  } finally {
    await client.close();
    await api.close();
  }
});

Deno.test("MCP over HTTP: refusals become tool errors carrying the envelope's code", async () => {
  const api = await startTestApi();
  const client = await connectClient(api);
  try {
    const missing = await callTool(client, "get_session", { session_id: "ses_nope" });
    assertEquals(missing.isError, true);
    assertEquals(missing.content[0], {
      type: "text",
      text: "session_not_found: No such session.",
    });

    const badUrl = await callTool(client, "create_agent", {
      tenant: "acme",
      name: "Support",
      brain_url: "https://not-a-websocket.example",
    });
    assertEquals(badUrl.isError, true);
    const text = badUrl.content[1];
    assert(text.type === "text");
    const envelope = JSON.parse(text.text);
    assertEquals(envelope.error.code, "invalid_request");
    assertEquals(envelope.error.details.field, "brain_url");

    const badStatus = await callTool(client, "list_sessions", { status: "sleeping" });
    assertEquals(badStatus.isError, true);
    assertMatch((badStatus.content[0] as { text: string }).text, /^invalid_request: /);

    // Nothing was created by the refused calls.
    assertEquals(payload(await callTool(client, "list_agents", {})).agents, []);
  } finally {
    await client.close();
    await api.close();
  }
});

Deno.test("MCP over HTTP: no admin token, no MCP", async () => {
  const api = await startTestApi();
  try {
    const init = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "t", version: "1" },
      },
    };
    const headers = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    };
    for (const auth of [undefined, "Bearer adm_wrong_token", "Basic Zm9vOmJhcg=="]) {
      const res = await fetch(`${api.url}/mcp`, {
        method: "POST",
        headers: auth ? { ...headers, authorization: auth } : headers,
        body: JSON.stringify(init),
      });
      const reply = await readReply(res);
      assertEquals(reply.status, 401, String(auth));
      assertEquals(reply.body.error.code, "unauthorized");
      assert(reply.body.correlation_id, "error envelope carries a correlation id");
    }

    // A secret key is not the admin token either.
    const made = await api.admin("/api/v1/agents.create", {
      tenant: "acme",
      name: "Support",
      brain_url: "wss://brain.example.test/voice",
    });
    const res = await fetch(`${api.url}/mcp`, {
      method: "POST",
      headers: { ...headers, authorization: `Bearer ${made.body.session_key}` },
      body: JSON.stringify(init),
    });
    assertEquals((await readReply(res)).status, 401);

    // And the SDK client surfaces it as a failed connect.
    let refused = false;
    const client = new Client({ name: "mcp-http-test", version: "1.0.0" });
    try {
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), {
          requestInit: { headers: { Authorization: "Bearer adm_wrong_token" } },
        }),
      );
    } catch {
      refused = true;
    } finally {
      await client.close();
    }
    assert(refused, "connect with a wrong token must fail");
  } finally {
    await api.close();
  }
});
