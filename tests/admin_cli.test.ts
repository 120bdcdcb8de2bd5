// `deno task admin` as an operator runs it: a child process talking to a real API over HTTP.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { startTestApi, type TestApi } from "./helpers/api_server.ts";

const ROOT = new URL("..", import.meta.url).pathname;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  // deno-lint-ignore no-explicit-any
  json: any;
}

/** Runs cli/admin.ts with the API's URL and admin token in its environment (unless overridden). */
async function admin(api: TestApi | null, args: string[], env: Record<string, string> = {}) {
  const base = Deno.env.toObject();
  delete base.ADMIN_TOKEN;
  delete base.API_URL;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--no-check", "cli/admin.ts", ...args],
    cwd: ROOT,
    env: { ...base, ...(api ? { API_URL: api.url, ADMIN_TOKEN: api.adminToken } : {}), ...env },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  const stderr = new TextDecoder().decode(out.stderr);
  let json = null;
  try {
    json = JSON.parse(out.code === 0 ? stdout : stderr);
  } catch { /* usage text, not JSON */ }
  return { code: out.code, stdout, stderr, json } as Run;
}

Deno.test("admin CLI: agents, keys and sessions against the API; a revoked key stops working", async () => {
  const api = await startTestApi();
  try {
    const made = await admin(api, [
      "agents",
      "create",
      "--tenant",
      "acme",
      "--name",
      "Support",
      "--brain-url",
      "wss://brain.example.test/voice",
      "--record-by-default",
    ]);
    assertEquals(made.code, 0, made.stderr);
    assertMatch(made.json.session_key, /^sk_/);
    assertEquals(made.json.agent.tenant, "acme");
    assertEquals(made.json.agent.record_by_default, true);
    const agentId = made.json.agent.agent_id;

    const updated = await admin(api, [
      "agents",
      "update",
      "--agent-id",
      agentId,
      "--name",
      "Sales",
      "--no-record-by-default",
      "--turn-patience",
      "high",
    ]);
    assertEquals(updated.code, 0, updated.stderr);
    assertEquals(updated.json.agent.name, "Sales");
    assertEquals(updated.json.agent.record_by_default, false);
    assertEquals(updated.json.agent.turn_patience, "high");

    const listed = await admin(api, ["agents", "list", "--tenant", "acme"]);
    assertEquals(listed.json.agents.map((a: { agent_id: string }) => a.agent_id), [agentId]);

    const pk = await admin(api, [
      "keys",
      "create",
      "--agent-id",
      agentId,
      "--kind",
      "publishable",
      "--origin",
      "https://shop.example",
      "--origin",
      "http://localhost:5173",
    ]);
    assertEquals(pk.code, 0, pk.stderr);
    assertMatch(pk.json.session_key, /^pk_/);
    assertEquals(pk.json.key.allowed_origins, ["https://shop.example", "http://localhost:5173"]);

    const sk = await admin(api, ["keys", "create", "--agent-id", agentId, "--kind", "secret"]);
    assertEquals(sk.code, 0, sk.stderr);
    const secret = sk.json.session_key;

    const keys = await admin(api, ["keys", "list", "--agent-id", agentId]);
    assertEquals(keys.json.keys.length, 3);
    assert(!keys.stdout.includes(secret), "keys list never shows a raw key");

    // The new secret key starts a call; the CLI reads the session back.
    const connected = await api.post("/api/v1/sessions.connect", { agent_id: agentId }, secret);
    assertEquals(connected.status, 200, JSON.stringify(connected.body));
    const sessionId = connected.body.session_id;
    const session = await admin(api, ["sessions", "get", "--session-id", sessionId]);
    assertEquals(session.code, 0, session.stderr);
    assertEquals(session.json.session_id, sessionId);
    assertEquals(session.json.agent_id, agentId);
    assertEquals(session.json.status, "created");
    const sessions = await admin(api, ["sessions", "list", "--agent-id", agentId, "--limit", "5"]);
    assertEquals(sessions.json.sessions.map((s: { session_id: string }) => s.session_id), [
      sessionId,
    ]);

    const revoked = await admin(api, ["keys", "revoke", "--key-id", sk.json.key.key_id]);
    assertEquals(revoked.code, 0, revoked.stderr);
    assertEquals(revoked.json.key.key_id, sk.json.key.key_id);
    const refused = await api.post("/api/v1/sessions.connect", { agent_id: agentId }, secret);
    assertEquals(refused.status, 401);
    assertEquals(refused.body.error.code, "invalid_api_key");

    const deleted = await admin(api, ["agents", "delete", "--agent-id", agentId]);
    assertEquals(deleted.code, 0, deleted.stderr);
    const gone = await admin(api, ["agents", "get", "--agent-id", agentId]);
    assertEquals(gone.code, 1);
    assertEquals(gone.stdout, "");
    assertEquals(gone.json.error.code, "agent_not_found");
  } finally {
    await api.close();
  }
});

Deno.test("admin CLI: refusals print the envelope on stderr and exit 1", async () => {
  const api = await startTestApi();
  try {
    const missing = await admin(api, ["sessions", "get", "--session-id", "ses_nope"]);
    assertEquals(missing.code, 1);
    assertEquals(missing.stdout, "");
    assertEquals(missing.json.error.code, "session_not_found");
    assert(missing.json.correlation_id);

    const badUrl = await admin(api, [
      "agents",
      "create",
      "--tenant",
      "acme",
      "--name",
      "X",
      "--brain-url",
      "https://nope.example",
    ]);
    assertEquals(badUrl.code, 1);
    assertEquals(badUrl.json.error.details.field, "brain_url");

    // Flags win over the environment: a wrong --admin-token is refused, and not echoed.
    const wrong = await admin(api, ["agents", "list", "--admin-token", "adm_wrong_token_42"]);
    assertEquals(wrong.code, 1);
    assertEquals(wrong.json.error.code, "unauthorized");
    assert(!wrong.stderr.includes("adm_wrong_token_42"));

    // --api-url and --admin-token alone suffice, with nothing in the environment.
    const flagsOnly = await admin(null, [
      "agents",
      "list",
      "--api-url",
      api.url,
      "--admin-token",
      api.adminToken,
    ]);
    assertEquals(flagsOnly.code, 0, flagsOnly.stderr);
    assertEquals(flagsOnly.json, { agents: [] });
  } finally {
    await api.close();
  }
});

Deno.test("admin CLI: usage mistakes exit 2 before sending anything", async () => {
  // No API at all: none of these may get as far as the network.
  const env = { API_URL: "http://127.0.0.1:9", ADMIN_TOKEN: "adm_x" };
  const cases: [string[], RegExp][] = [
    [["agents", "create", "--tenant", "acme"], /needs --name, --brain-url/],
    [
      ["keys", "create", "--agent-id", "a", "--kind", "secret", "--tenant", "x"],
      /takes no --tenant/,
    ],
    [["sessions", "list", "--limit", "ten"], /--limit must be an integer/],
    [["widgets", "list"], /Unknown command "widgets list"/],
    [["agents", "list", "--bogus"], /bogus/],
  ];
  for (const [args, message] of cases) {
    const run = await admin(null, args, env);
    assertEquals(run.code, 2, args.join(" "));
    assertMatch(run.stderr, message);
    assertMatch(run.stderr, /Usage: deno task admin/);
  }
  const noToken = await admin(null, ["agents", "list"], { API_URL: "http://127.0.0.1:9" });
  assertEquals(noToken.code, 2);
  assertMatch(noToken.stderr, /ADMIN_TOKEN/);

  const help = await admin(null, ["--help"]);
  assertEquals(help.code, 0);
  assertMatch(
    help.stdout,
    /keys create --agent-id ID --kind secret\|publishable \[--origin ORIGIN\]/,
  );

  // An unreachable API is reported plainly, exit 1.
  const down = await admin(null, ["agents", "list"], env);
  assertEquals(down.code, 1);
  assertMatch(down.stderr, /Cannot reach the API at http:\/\/127\.0\.0\.1:9/);
});
