// An agent's echo_cancellation (issue 35, docs/echo.md): 'auto' unless set; set to 'on' or 'off'
// through the admin API, the admin CLI, the MCP tools and the console; any other value refused
// with the field named, and the refusal changes nothing. The worker reads it when the call starts.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { makeTenant, startTestApi, type TestApi } from "./helpers/api_server.ts";
import { signIn } from "./helpers/console_client.ts";
import { markActive } from "../db/sessions.ts";

const ROOT = new URL("..", import.meta.url).pathname;

const stored = async (api: TestApi, agentId: string) =>
  (await api.db.sql`select echo_cancellation from agents where id = ${agentId}`)[0]
    .echo_cancellation;

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
  return { code: out.code, json: JSON.parse(text) };
}

Deno.test("an agent's echo cancellation is set through every surface and other values are refused", async (t) => {
  const api = await startTestApi();
  try {
    const acme = await makeTenant(api, "acme");
    await t.step(
      "admin API: auto by default, set on create and update, refusals name the field",
      async () => {
        const got = await api.admin("/api/v1/agents.get", { agent_id: acme.agent_id });
        assertEquals(got.body.agent.echo_cancellation, "auto");
        const made = await api.admin("/api/v1/agents.create", {
          tenant: "acme",
          name: "Quiet line",
          brain_url: "wss://brain.example/voice",
          echo_cancellation: "off",
        });
        assertEquals(made.body.agent.echo_cancellation, "off");
        const upd = await api.admin("/api/v1/agents.update", {
          agent_id: acme.agent_id,
          echo_cancellation: "on",
        });
        assertEquals(upd.body.agent.echo_cancellation, "on");
        for (const bad of ["yes", true, "ON", ""]) {
          const r = await api.admin("/api/v1/agents.update", {
            agent_id: acme.agent_id,
            name: "Renamed",
            echo_cancellation: bad,
          });
          assertEquals([r.status, r.body.error.code, r.body.error.details.field], [
            400,
            "invalid_request",
            "echo_cancellation",
          ]);
          assertMatch(r.body.error.message, /auto, on, off/);
        }
        // Refused whole: the name did not change either.
        const after = await api.admin("/api/v1/agents.get", { agent_id: acme.agent_id });
        assertEquals([after.body.agent.name, after.body.agent.echo_cancellation], [
          "Support",
          "on",
        ]);
        const refusedCreate = await api.admin("/api/v1/agents.create", {
          tenant: "acme",
          name: "Never made",
          brain_url: "wss://brain.example/voice",
          echo_cancellation: "maybe",
        });
        assertEquals(refusedCreate.status, 400);
        const names = await api.db.sql`select name from agents where name = 'Never made'`;
        assertEquals(names.length, 0);
      },
    );

    await t.step("the worker reads the agent's setting when the call starts", async () => {
      const r = await api.post("/api/v1/sessions.connect", { agent_id: acme.agent_id }, acme.sk);
      assertEquals(r.status, 200);
      await api.db.sql`update sessions set status = 'connecting' where id = ${r.body.session_id}`;
      const active = await markActive(api.db.sql, r.body.session_id);
      assertEquals(active?.echoCancellation, "on");
    });

    await t.step("admin CLI: --echo-cancellation sets it; another value is refused", async () => {
      const ok = await cli(api, [
        "agents",
        "update",
        "--agent-id",
        acme.agent_id,
        "--echo-cancellation",
        "off",
      ]);
      assertEquals([ok.code, ok.json.agent.echo_cancellation], [0, "off"]);
      const bad = await cli(api, [
        "agents",
        "update",
        "--agent-id",
        acme.agent_id,
        "--echo-cancellation",
        "sometimes",
      ]);
      assertEquals([bad.code, bad.json.error.details.field], [1, "echo_cancellation"]);
      assertEquals(await stored(api, acme.agent_id), "off");
    });

    await t.step("MCP: update_agent sets it; another value is refused", async () => {
      const client = new Client({ name: "echo-setting-test", version: "1.0.0" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), {
          requestInit: { headers: { Authorization: `Bearer ${api.adminToken}` } },
        }),
      );
      try {
        const call = (args: Record<string, unknown>) =>
          client.callTool({ name: "update_agent", arguments: args }) as Promise<CallToolResult>;
        const ok = await call({ agent_id: acme.agent_id, echo_cancellation: "auto" });
        assert(!ok.isError, JSON.stringify(ok.content));
        assertEquals(await stored(api, acme.agent_id), "auto");
        const bad = await call({ agent_id: acme.agent_id, echo_cancellation: "loud" });
        assert(bad.isError, "MCP took echo_cancellation: loud");
        assertMatch(JSON.stringify(bad.content), /echo_cancellation/);
        assertEquals(await stored(api, acme.agent_id), "auto");
      } finally {
        await client.close();
      }
    });

    await t.step("console: the agent's page sets it; another value is refused", async () => {
      const op = await signIn(api);
      const page = await op.get(`/console/agents/${acme.agent_id}`);
      assertMatch(page.html, /name="echo_cancellation"/);
      const form = { name: "Front desk", brain_url: "wss://brain.example/voice" };
      const saved = await op.post(`/console/agents/${acme.agent_id}`, {
        ...form,
        echo_cancellation: "on",
      });
      assert(saved.status === 303 || saved.status === 200, `status ${saved.status}`);
      assertEquals(await stored(api, acme.agent_id), "on");
      const refused = await op.post(`/console/agents/${acme.agent_id}`, {
        ...form,
        echo_cancellation: "half",
      });
      assertEquals(refused.status, 400);
      assertMatch(refused.html, /Echo cancellation must be one of auto, on, off/);
      assertEquals(await stored(api, acme.agent_id), "on");
    });
  } finally {
    await api.close();
  }
});
