// An agent's redaction categories (issue 37) managed like its other settings: set and read
// through the admin API, `deno task admin redaction ...` and the MCP tools, all against one real
// API; an unknown category, a repeated one, or another agent's id is refused with the same
// envelope everywhere, and a refusal changes nothing.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { assertEquals } from "./helpers/assert.ts";
import { makeTenant, startTestApi, type TestApi } from "./helpers/api_server.ts";

const ROOT = new URL("..", import.meta.url).pathname;

async function cli(api: TestApi, args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--no-check", "cli/admin.ts", ...args],
    cwd: ROOT,
    env: { API_URL: api.url, ADMIN_TOKEN: api.adminToken },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.code === 0 ? out.stdout : out.stderr);
  let json = null;
  try {
    json = JSON.parse(text);
  } catch { /* usage */ }
  return { code: out.code, json };
}

async function mcp(api: TestApi, name: string, args: Record<string, unknown>) {
  const client = new Client({ name: "redaction-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${api.adminToken}` } },
    }),
  );
  try {
    const r = await client.callTool({ name, arguments: args }) as CallToolResult;
    return { isError: r.isError === true, text: (r.content[0] as { text: string }).text };
  } finally {
    await client.close();
  }
}

Deno.test("an agent's redaction is set, read and refused alike through the API, CLI and MCP", async () => {
  const api = await startTestApi();
  try {
    const { agent_id } = await makeTenant(api);
    const read = async () =>
      (await api.admin("/api/v1/agents.redaction.get", { agent_id })).body.redaction.categories;
    assertEquals(await read(), [], "none by default");

    // The API: any order in, the catalogue's order out.
    const set = await api.admin("/api/v1/agents.redaction.set", {
      agent_id,
      categories: ["email", "card"],
    });
    assertEquals(set.status, 200);
    assertEquals(set.body.redaction.categories, ["card", "email"]);

    // The CLI.
    const viaCli = await cli(api, [
      "redaction",
      "set",
      "--agent-id",
      agent_id,
      "--categories",
      "phone,aadhaar,keypad",
    ]);
    assertEquals(viaCli.code, 0);
    assertEquals(viaCli.json.redaction.categories, ["phone", "aadhaar", "keypad"]);
    assertEquals(
      (await cli(api, ["redaction", "get", "--agent-id", agent_id])).json.redaction.categories,
      ["phone", "aadhaar", "keypad"],
    );

    // MCP.
    const viaMcp = await mcp(api, "set_agent_redaction", { agent_id, categories: ["pan"] });
    assertEquals(viaMcp.isError, false);
    assertEquals(JSON.parse(viaMcp.text).redaction.categories, ["pan"]);
    const got = await mcp(api, "get_agent_redaction", { agent_id });
    assertEquals(JSON.parse(got.text).redaction.categories, ["pan"]);

    // Refusals: the same code on every path, and nothing changed.
    for (const categories of [["cvv"], ["card", "card"], "card"]) {
      const r = await api.admin("/api/v1/agents.redaction.set", { agent_id, categories });
      assertEquals([r.status, r.body.error.code], [400, "invalid_request"], JSON.stringify(r.body));
    }
    const cliBad = await cli(api, [
      "redaction",
      "set",
      "--agent-id",
      agent_id,
      "--categories",
      "card,cvv",
    ]);
    assertEquals([cliBad.code, cliBad.json.error.code], [1, "invalid_request"]);
    const mcpBad = await mcp(api, "set_agent_redaction", { agent_id, categories: ["cvv"] });
    assertEquals(mcpBad.isError, true);
    const missing = await api.admin("/api/v1/agents.redaction.set", {
      agent_id: "ag_nobody",
      categories: [],
    });
    assertEquals([missing.status, missing.body.error.code], [404, "agent_not_found"]);
    assertEquals(await read(), ["pan"]);

    // `none` turns it off.
    const off = await cli(api, [
      "redaction",
      "set",
      "--agent-id",
      agent_id,
      "--categories",
      "none",
    ]);
    assertEquals(off.json.redaction.categories, []);
    assertEquals(await read(), []);
  } finally {
    await api.close();
  }
});
