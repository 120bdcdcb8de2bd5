// `deno task mcp` as an MCP client launches it: a child process speaking MCP on stdio, calling
// a real API over HTTP with the admin token from its environment.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { startTestApi } from "./helpers/api_server.ts";

const ROOT = new URL("..", import.meta.url).pathname;

/** `deno run cli/mcp.ts` launched by the SDK's stdio client, as an MCP host would. */
async function stdioSession(env: Record<string, string>) {
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: ["run", "-A", "--no-check", "cli/mcp.ts"],
    cwd: ROOT,
    env: { ...Deno.env.toObject(), ...env },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Uint8Array) => (stderr += new TextDecoder().decode(chunk)));
  const client = new Client({ name: "mcp-stdio-test", version: "1.0.0" });
  await client.connect(transport);
  return {
    client,
    /** Closes the session (the SDK ends the child) and returns what it wrote to stderr. */
    close: async () => {
      await client.close();
      return stderr;
    },
  };
}

// deno-lint-ignore no-explicit-any
function payload(result: CallToolResult): any {
  assert(!result.isError, `tool error: ${JSON.stringify(result.content)}`);
  const first = result.content[0];
  assert(first.type === "text");
  return JSON.parse(first.text);
}

Deno.test("MCP over stdio: create_agent and list_agents against the API", async () => {
  const api = await startTestApi();
  const TOKEN = api.adminToken;
  const { client, close } = await stdioSession({ API_URL: api.url, ADMIN_TOKEN: TOKEN });
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

    const made = payload(
      await client.callTool({
        name: "create_agent",
        arguments: { tenant: "acme", name: "Support", brain_url: "wss://brain.example.test/v" },
      }) as CallToolResult,
    );
    assertMatch(made.session_key, /^sk_/);

    const listed = payload(
      await client.callTool({ name: "list_agents", arguments: {} }) as CallToolResult,
    );
    assertEquals(listed.agents.map((a: { agent_id: string }) => a.agent_id), [
      made.agent.agent_id,
    ]);

    // The API really has it (not just the MCP server's say-so).
    const got = await api.admin("/api/v1/agents.get", { agent_id: made.agent.agent_id });
    assertEquals(got.body.agent.tenant, "acme");
    assertEquals(got.body.agent.name, "Support");

    const missing = await client.callTool({
      name: "get_session",
      arguments: { session_id: "ses_nope" },
    }) as CallToolResult;
    assertEquals(missing.isError, true);
    assertEquals(missing.content[0], { type: "text", text: "session_not_found: No such session." });
  } finally {
    try {
      const diagnostics = await close();
      assertMatch(diagnostics, /MCP server on stdio/);
      assert(!diagnostics.includes(TOKEN), "the admin token is never logged");
    } finally {
      await api.close();
    }
  }
});

Deno.test("MCP over stdio: a wrong admin token is a tool error, not a crash", async () => {
  const api = await startTestApi();
  const TOKEN = "adm_wrong_0123456789";
  const { client, close } = await stdioSession({ API_URL: api.url, ADMIN_TOKEN: TOKEN });
  try {
    const res = await client.callTool({ name: "list_agents", arguments: {} }) as CallToolResult;
    assertEquals(res.isError, true);
    assertMatch((res.content[0] as { text: string }).text, /^unauthorized: /);
  } finally {
    try {
      const diagnostics = await close();
      assertMatch(diagnostics, /MCP server on stdio/);
      assert(!diagnostics.includes(TOKEN), "the admin token is never logged");
    } finally {
      await api.close();
    }
  }
});

Deno.test("MCP over stdio: refuses to start without ADMIN_TOKEN, saying why", async () => {
  const env = Deno.env.toObject();
  delete env.ADMIN_TOKEN;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--no-check", "cli/mcp.ts"],
    cwd: ROOT,
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  assertEquals(out.code, 2);
  assertEquals(new TextDecoder().decode(out.stdout), "", "stdout is for the protocol only");
  assertMatch(new TextDecoder().decode(out.stderr), /ADMIN_TOKEN is not set/);
});
