// `deno task admin campaigns ...` and the campaign MCP tools reach the same routes: a campaign made
// from a CSV file through the CLI is read, paused and refused through MCP as the API does it.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { assert, assertEquals } from "./helpers/assert.ts";
import { makeTenant, startTestApi, type TestApi } from "./helpers/api_server.ts";

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

async function tool(client: Client, name: string, args: Record<string, unknown>) {
  return await client.callTool({ name, arguments: args }) as CallToolResult;
}

Deno.test("campaigns through the admin CLI and MCP", async () => {
  const api = await startTestApi();
  const dir = await Deno.makeTempDir();
  const client = new Client({ name: "campaign-test", version: "1.0.0" });
  try {
    const acme = await makeTenant(api, "acme");
    await api.admin("/api/v1/numbers.create", { number: "+912240000000", agent_id: acme.agent_id });
    const csv = `${dir}/contacts.csv`;
    await Deno.writeTextFile(
      csv,
      "number,name,time_zone\n+919810000000,Asha,\n+14155550100,Bob,America/New_York\n",
    );
    const made = await admin(api, [
      ...["campaigns", "create", "--agent-id", acme.agent_id, "--name", "dues"],
      ...["--from", "+912240000000", "--contacts", csv, "--concurrency", "2"],
      ...["--retry-on", "busy", "--retry-on", "no_answer", "--retry-on", "machine"],
    ]);
    assertEquals(made.code, 0, made.text);
    const id = made.json.campaign.campaign_id;
    assertEquals(made.json.campaign.retry_on, ["busy", "no_answer", "machine"]);
    const contacts = await admin(api, ["campaigns", "contacts", "--campaign-id", id]);
    assertEquals(
      contacts.json.contacts.map((
        c: { data: unknown; time_zone: string },
      ) => [c.data, c.time_zone]),
      [[{ name: "Asha" }, "Asia/Kolkata"], [{ name: "Bob" }, "America/New_York"]],
    );
    // A refusal is the route's: exit 1 with the envelope, naming the contact.
    await Deno.writeTextFile(`${dir}/bad.json`, JSON.stringify([{ number: "12345" }]));
    const bad = await admin(api, [
      ...["campaigns", "create", "--agent-id", acme.agent_id, "--name", "x"],
      ...["--from", "+912240000000", "--contacts", `${dir}/bad.json`],
    ]);
    assertEquals([bad.code, bad.json.error.details.field], [1, "contacts[0].number"]);

    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${api.adminToken}` } },
      }),
    );
    const paused = await tool(client, "pause_campaign", { campaign_id: id });
    assert(!paused.isError, JSON.stringify(paused.content));
    const got = await tool(client, "get_campaign", { campaign_id: id });
    const campaign = (got.structuredContent as { campaign: Record<string, unknown> }).campaign;
    assertEquals(campaign.status, "paused");
    assertEquals((campaign.progress as { contacts: { pending: number } }).contacts.pending, 2);
    const refused = await tool(client, "create_campaign", {
      agent_id: acme.agent_id,
      name: "x",
      from: "+912249999999",
      contacts: [{ number: "+919810000000" }],
    });
    assert(refused.isError);
    assert(JSON.stringify(refused.content).includes("from_not_owned"));
    const listed = await admin(api, ["campaigns", "list", "--status", "paused"]);
    assertEquals(listed.json.campaigns.map((c: { campaign_id: string }) => c.campaign_id), [id]);
  } finally {
    await client.close();
    await Deno.remove(dir, { recursive: true });
    await api.close();
  }
});
