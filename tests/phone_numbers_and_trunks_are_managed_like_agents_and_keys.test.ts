// Phone numbers and SIP trunks through every management surface: the admin routes (validation,
// refusals that change nothing, secrets never shown), the MCP tools over HTTP and the admin CLI
// as a child process, all against the real API and database.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { assert, assertEquals } from "./helpers/assert.ts";
import { makeTenant, startTestApi, type TestApi } from "./helpers/api_server.ts";
import { findPhoneNumber } from "../db/phone_numbers.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const PASSWORD = "a long trunk secret";

/** Everything the phone tables hold, to show a refusal changed nothing. */
async function snapshot(api: TestApi) {
  const trunks = await api.db.sql`select * from trunks order by id`;
  const numbers = await api.db.sql`select * from phone_numbers order by number`;
  return JSON.stringify({ trunks, numbers });
}

Deno.test("admin routes: trunks and numbers are created, read, changed and deleted; refusals change nothing", async (t) => {
  const api = await startTestApi();
  try {
    const acme = await makeTenant(api, "acme");
    let trunkId = "";

    await t.step(
      "trunks.create keeps only the password's hashes and never shows them",
      async () => {
        const r = await api.admin("/api/v1/trunks.create", {
          name: "Carrier",
          allowed_sources: ["198.51.100.0/24", "2001:db8::1"],
          auth_username: "acme",
          auth_password: PASSWORD,
        });
        assertEquals(r.status, 200, JSON.stringify(r.body));
        trunkId = r.body.trunk.trunk_id;
        assertEquals(r.body.trunk.auth_username, "acme");
        assertEquals(r.body.trunk.auth_realm, "voice");
        assertEquals(r.body.trunk.allowed_sources, ["198.51.100.0/24", "2001:db8::1"]);
        const shown = JSON.stringify(r.body) +
          JSON.stringify((await api.admin("/api/v1/trunks.list")).body) +
          JSON.stringify((await api.admin("/api/v1/trunks.get", { trunk_id: trunkId })).body);
        assert(!shown.includes(PASSWORD) && !/ha1/.test(shown), "a secret was shown");
        const [row] = await api.db.sql`select * from trunks where id = ${trunkId}`;
        assert(!JSON.stringify(row).includes(PASSWORD), "the password was stored");
        assertEquals([row.auth_ha1_md5.length, row.auth_ha1_sha256.length], [32, 64]);
      },
    );

    await t.step("trunks.create refuses what cannot check a caller, naming the field", async () => {
      const before = await snapshot(api);
      const bad: [unknown, string][] = [
        [{ allowed_sources: ["10.0.0.0/8"] }, "name"],
        [{ name: "x" }, "allowed_sources"],
        [{ name: "x", allowed_sources: ["10.0.0.0/33"] }, "allowed_sources.0"],
        [{ name: "x", allowed_sources: ["10.0.0.1", "example.com"] }, "allowed_sources.1"],
        [{ name: "x", auth_username: "u" }, "auth_password"],
        [{ name: "x", auth_password: PASSWORD }, "auth_username"],
        [{ name: "x", auth_username: "u", auth_password: "short" }, "auth_password"],
        [{ name: "x", auth_username: 'a"b', auth_password: PASSWORD }, "auth_username"],
        [{ name: "x", allowed_sources: ["10.0.0.0/8"], auth_realm: "r" }, "auth_realm"],
        [{ name: "x", allowed_sources: ["10.0.0.0/8"], secret: 1 }, "secret"],
      ];
      for (const [body, field] of bad) {
        const r = await api.admin("/api/v1/trunks.create", body);
        assertEquals(
          [r.status, r.body.error?.code, r.body.error?.details?.field],
          [400, "invalid_request", field],
          JSON.stringify(body),
        );
      }
      assertEquals(await snapshot(api), before);
    });

    await t.step("numbers.create checks the number, the agent and the trunk", async () => {
      const before = await snapshot(api);
      const cases: [unknown, number, string][] = [
        [{ number: "14155550100", agent_id: acme.agent_id }, 400, "invalid_request"],
        [{ number: "+1415", agent_id: acme.agent_id }, 400, "invalid_request"],
        [{ number: "+1415555010012345", agent_id: acme.agent_id }, 400, "invalid_request"],
        [{ number: "+14155550100", agent_id: "ag_none" }, 404, "agent_not_found"],
        [
          { number: "+14155550100", agent_id: acme.agent_id, trunk_id: "trk_none" },
          404,
          "trunk_not_found",
        ],
        [
          { number: "+14155550100", agent_id: acme.agent_id, enabled: "yes" },
          400,
          "invalid_request",
        ],
      ];
      for (const [body, status, code] of cases) {
        const r = await api.admin("/api/v1/numbers.create", body);
        assertEquals([r.status, r.body.error?.code], [status, code], JSON.stringify(body));
      }
      assertEquals(await snapshot(api), before);
      const made = await api.admin("/api/v1/numbers.create", {
        number: "+14155550100",
        agent_id: acme.agent_id,
        trunk_id: trunkId,
      });
      assertEquals(made.status, 200);
      assertEquals(made.body.phone_number.enabled, true);
      const again = await api.admin("/api/v1/numbers.create", {
        number: "+14155550100",
        agent_id: acme.agent_id,
      });
      assertEquals([again.status, again.body.error.code], [409, "number_taken"]);
      assertEquals(
        (await api.admin("/api/v1/numbers.get", { number: "+14155550100" })).body.phone_number
          .trunk_id,
        trunkId,
      );
    });

    await t.step(
      "findPhoneNumber: the route of an enabled number of a live agent only",
      async () => {
        const route = await findPhoneNumber(api.db.sql, "+14155550100");
        assertEquals(route, {
          number: "+14155550100",
          agent_id: acme.agent_id,
          workspace_id: acme.workspace_id,
          trunk_id: trunkId,
          record_by_default: false,
          interruption_sensitivity: "medium",
          turn_patience: "medium",
        });
        assertEquals(await findPhoneNumber(api.db.sql, "+14155550199"), undefined);
        await api.admin("/api/v1/numbers.update", { number: "+14155550100", enabled: false });
        assertEquals(await findPhoneNumber(api.db.sql, "+14155550100"), undefined);
        await api.admin("/api/v1/numbers.update", { number: "+14155550100", enabled: true });
        assert(await findPhoneNumber(api.db.sql, "+14155550100"));
      },
    );

    await t.step("a trunk with numbers is not deleted; off its trunk, it is", async () => {
      const before = await snapshot(api);
      const inUse = await api.admin("/api/v1/trunks.delete", { trunk_id: trunkId });
      assertEquals([inUse.status, inUse.body.error.code], [409, "trunk_in_use"]);
      assertEquals(await snapshot(api), before);
      const moved = await api.admin("/api/v1/numbers.update", {
        number: "+14155550100",
        trunk_id: null,
      });
      assertEquals(moved.body.phone_number.trunk_id, null);
      const listed = await api.admin("/api/v1/numbers.list", { agent_id: acme.agent_id });
      assertEquals(listed.body.phone_numbers.length, 1);
      assertEquals((await api.admin("/api/v1/trunks.delete", { trunk_id: trunkId })).status, 200);
      assertEquals((await api.admin("/api/v1/trunks.get", { trunk_id: trunkId })).status, 404);
    });

    await t.step(
      "trunks.update: a new username needs the password; removing the last check is refused",
      async () => {
        const made = await api.admin("/api/v1/trunks.create", {
          name: "Digest only",
          auth_username: "one",
          auth_password: PASSWORD,
        });
        const id = made.body.trunk.trunk_id;
        const [old] = await api.db.sql`select auth_ha1_md5 from trunks where id = ${id}`;
        const before = await snapshot(api);
        const refused: [unknown, string][] = [
          [{ trunk_id: id, auth_username: "two" }, "auth_password"],
          [{ trunk_id: id, remove_auth: true }, "allowed_sources"],
          [{ trunk_id: id, allowed_sources: ["nope"] }, "allowed_sources.0"],
          [{ trunk_id: id, name: " " }, "name"],
        ];
        for (const [body, field] of refused) {
          const r = await api.admin("/api/v1/trunks.update", body);
          assertEquals([r.status, r.body.error.details.field], [400, field], JSON.stringify(body));
        }
        assertEquals(await snapshot(api), before);
        const renamed = await api.admin("/api/v1/trunks.update", {
          trunk_id: id,
          auth_username: "two",
          auth_password: PASSWORD,
        });
        assertEquals(renamed.body.trunk.auth_username, "two");
        const [now] = await api.db.sql`select auth_ha1_md5 from trunks where id = ${id}`;
        assert(now.auth_ha1_md5 !== old.auth_ha1_md5, "the hash binds the username");
        const swapped = await api.admin("/api/v1/trunks.update", {
          trunk_id: id,
          allowed_sources: ["192.0.2.0/24"],
          remove_auth: true,
        });
        assertEquals([swapped.body.trunk.auth_username, swapped.body.trunk.allowed_sources], [
          null,
          ["192.0.2.0/24"],
        ]);
        assertEquals((await api.admin("/api/v1/trunks.update", { trunk_id: "trk_x" })).status, 404);
      },
    );

    await t.step("numbers need the admin token; a secret key is not enough", async () => {
      for (const path of ["numbers.list", "trunks.list", "numbers.create", "trunks.create"]) {
        const none = await api.post(`/api/v1/${path}`, {});
        const key = await api.post(`/api/v1/${path}`, {}, acme.sk);
        assertEquals([none.status, key.status], [401, 403], path);
      }
      const gone = await api.admin("/api/v1/numbers.delete", { number: "+14155550100" });
      assertEquals(gone.status, 200);
      assertEquals(
        (await api.admin("/api/v1/numbers.delete", { number: "+14155550100" })).status,
        404,
      );
    });
  } finally {
    await api.close();
  }
});

Deno.test("MCP tools over HTTP make a trunk and a number, and relay a refusal as a tool error", async () => {
  const api = await startTestApi();
  const client = new Client({ name: "phone-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${api.adminToken}` } },
    }),
  );
  const call = async (name: string, args: Record<string, unknown>) =>
    await client.callTool({ name, arguments: args }) as CallToolResult;
  try {
    const acme = await makeTenant(api, "acme");
    const trunk = await call("create_trunk", { name: "Carrier", allowed_sources: ["10.1.0.0/16"] });
    assert(!trunk.isError, JSON.stringify(trunk.content));
    const trunkId = (trunk.structuredContent as { trunk: { trunk_id: string } }).trunk.trunk_id;
    const made = await call("create_phone_number", {
      number: "+919876543210",
      agent_id: acme.agent_id,
      trunk_id: trunkId,
    });
    assert(!made.isError, JSON.stringify(made.content));
    const listed = await call("list_phone_numbers", { trunk_id: trunkId });
    assertEquals(
      (listed.structuredContent as { phone_numbers: { number: string }[] }).phone_numbers
        .map((n) => n.number),
      ["+919876543210"],
    );
    const bad = await call("create_phone_number", { number: "98765", agent_id: acme.agent_id });
    assert(bad.isError);
    assert(JSON.stringify(bad.content).includes("invalid_request"));
    const off = await call("update_phone_number", { number: "+919876543210", trunk_id: null });
    assertEquals(
      (off.structuredContent as { phone_number: { trunk_id: null } }).phone_number.trunk_id,
      null,
    );
    assert(!(await call("delete_trunk", { trunk_id: trunkId })).isError);
  } finally {
    await client.close();
    await api.close();
  }
});

async function cli(api: TestApi, args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--no-check", "cli/admin.ts", ...args],
    cwd: ROOT,
    env: { API_URL: api.url, ADMIN_TOKEN: api.adminToken, NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  const stderr = new TextDecoder().decode(out.stderr);
  let json = null;
  try {
    json = JSON.parse(out.code === 0 ? stdout : stderr);
  } catch { /* usage text */ }
  return { code: out.code, stdout, stderr, json };
}

Deno.test("admin CLI: trunks and numbers from the command line", async () => {
  const api = await startTestApi();
  try {
    const acme = await makeTenant(api, "acme");
    const trunk = await cli(api, [
      ...["trunks", "create", "--name", "Carrier", "--source", "10.0.0.0/8"],
      ...["--source", "192.0.2.7", "--auth-username", "acme", "--auth-password", PASSWORD],
    ]);
    assertEquals(trunk.code, 0, trunk.stderr);
    assertEquals(trunk.json.trunk.allowed_sources, ["10.0.0.0/8", "192.0.2.7"]);
    assert(!trunk.stdout.includes(PASSWORD));
    const id = trunk.json.trunk.trunk_id;
    const made = await cli(api, [
      ...["numbers", "create", "--number", "+4420794600000", "--agent-id", acme.agent_id],
      ...["--trunk-id", id, "--no-enabled"],
    ]);
    assertEquals(made.code, 0, made.stderr);
    assertEquals([made.json.phone_number.enabled, made.json.phone_number.trunk_id], [false, id]);
    const cleared = await cli(api, [
      ...["numbers", "update", "--number", "+4420794600000", "--clear-trunk", "--enabled"],
    ]);
    assertEquals([cleared.json.phone_number.trunk_id, cleared.json.phone_number.enabled], [
      null,
      true,
    ]);
    const refused = await cli(api, ["numbers", "create", "--number", "+44", "--agent-id", "x"]);
    assertEquals([refused.code, refused.json.error.code], [1, "invalid_request"]);
    const usage = await cli(api, [
      "numbers",
      "update",
      "--number",
      "+1",
      "--clear-trunk",
      "--trunk-id",
      id,
    ]);
    assertEquals(usage.code, 2);
    const listed = await cli(api, ["trunks", "list"]);
    assertEquals(listed.json.trunks.map((t: { trunk_id: string }) => t.trunk_id), [id]);
  } finally {
    await api.close();
  }
});
