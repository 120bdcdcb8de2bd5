// The management API: agents, keys and sessions, with the admin token or a secret key's scope.
import { assert, assertEquals } from "./helpers/assert.ts";
import { makeTenant, PAGE_ORIGIN, startTestApi } from "./helpers/api_server.ts";

const CONNECT = "/api/v1/sessions.connect";

Deno.test("agents and keys", async (t) => {
  const api = await startTestApi();

  await t.step(
    "agents.create returns the agent and its sk_ key once; only the hash is stored",
    async () => {
      const r = await api.admin("/api/v1/agents.create", {
        tenant: "acme",
        name: "Support",
        brain_url: "wss://brain.acme.example/voice",
      });
      assertEquals(r.status, 200);
      assertEquals(r.body.agent.tenant, "acme");
      assertEquals(r.body.agent.record_by_default, false);
      assert(r.body.session_key.startsWith("sk_"));
      const stored = await api.db.sql`select key_hash, prefix from api_keys
      where agent_id = ${r.body.agent.agent_id}`;
      assertEquals(stored.length, 1);
      assertEquals(stored[0].key_hash.length, 32); // HMAC-SHA-256
      assert(!new TextDecoder().decode(stored[0].key_hash).includes(r.body.session_key));
      assertEquals(stored[0].prefix, r.body.session_key.slice(0, 9));
      const listed = await api.admin("/api/v1/keys.list", { agent_id: r.body.agent.agent_id });
      assert(!JSON.stringify(listed.body).includes(r.body.session_key), "raw key shown again");
    },
  );

  await t.step("agents.create refuses bad input with the field", async () => {
    const bad: [unknown, string][] = [
      [{ name: "x", brain_url: "wss://x" }, "tenant"],
      [{ tenant: "t", name: "x", brain_url: "https://x" }, "brain_url"],
      [
        { tenant: "t", name: "x", brain_url: "wss://x", record_by_default: "yes" },
        "record_by_default",
      ],
      [{ tenant: "t", name: "x", brain_url: "wss://x", extra: 1 }, "extra"],
    ];
    for (const [body, field] of bad) {
      const r = await api.admin("/api/v1/agents.create", body);
      assertEquals([r.status, r.body.error.code, r.body.error.details.field], [
        400,
        "invalid_request",
        field,
      ]);
    }
  });

  await t.step("agents.list filters by tenant; get, update and delete", async () => {
    const globex = await makeTenant(api, "globex");
    const list = await api.admin("/api/v1/agents.list", { tenant: "globex" });
    assertEquals(list.body.agents.map((a: { agent_id: string }) => a.agent_id), [globex.agent_id]);
    const upd = await api.admin("/api/v1/agents.update", {
      agent_id: globex.agent_id,
      record_by_default: true,
    });
    assertEquals(upd.body.agent.record_by_default, true);
    // The cached grant sees the new default at once.
    const r = await api.post(CONNECT, { agent_id: globex.agent_id }, globex.sk);
    const [row] = await api.db
      .sql`select record_effective from sessions where id = ${r.body.session_id}`;
    assertEquals(row.record_effective, true);

    const del = await api.admin("/api/v1/agents.delete", { agent_id: globex.agent_id });
    assertEquals(del.status, 200);
    assertEquals(del.body.revoked_key_ids.length, 2);
    assertEquals(
      (await api.admin("/api/v1/agents.get", { agent_id: globex.agent_id })).status,
      404,
    );
    const after = await api.post(CONNECT, { agent_id: globex.agent_id }, globex.sk);
    assertEquals([after.status, after.body.error.code], [401, "invalid_api_key"]);
  });

  await t.step("keys.create: publishable keys take origins, secret keys do not", async () => {
    const acme = await makeTenant(api, "acme2");
    const cases: [unknown, number, string?][] = [
      [
        { agent_id: acme.agent_id, kind: "publishable", allowed_origins: ["https://a.example"] },
        200,
      ],
      [
        {
          agent_id: acme.agent_id,
          kind: "publishable",
          allowed_origins: ["https://a.example/path"],
        },
        400,
        "allowed_origins.0",
      ],
      [
        { agent_id: acme.agent_id, kind: "publishable", allowed_origins: ["not a url"] },
        400,
        "allowed_origins.0",
      ],
      [
        { agent_id: acme.agent_id, kind: "secret", allowed_origins: ["https://a.example"] },
        400,
        "allowed_origins",
      ],
      [{ agent_id: acme.agent_id, kind: "root" }, 400, "kind"],
      [{ agent_id: "ag_none", kind: "secret" }, 404],
    ];
    for (const [body, status, field] of cases) {
      const r = await api.admin("/api/v1/keys.create", body);
      assertEquals(r.status, status, JSON.stringify(r.body));
      if (field) assertEquals(r.body.error.details.field, field);
    }
    assertEquals((await api.admin("/api/v1/keys.revoke", { key_id: "key_none" })).status, 404);
  });

  await t.step("admin routes need the admin token", async () => {
    const none = await api.post("/api/v1/agents.list", {});
    assertEquals([none.status, none.body.error.code], [401, "unauthorized"]);
    const wrong = await api.post("/api/v1/agents.list", {}, "adm_wrong");
    assertEquals([wrong.status, wrong.body.error.code], [401, "unauthorized"]);
  });

  await api.close();
});

Deno.test("sessions: get, list, create, scoped for secret keys", async (t) => {
  const api = await startTestApi();
  const acme = await makeTenant(api, "acme");
  const globex = await makeTenant(api, "globex");
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    const r = await api.post(CONNECT, {
      agent_id: acme.agent_id,
      display_name: `call ${i}`,
      metadata: { n: String(i) },
      init: { i },
    }, acme.sk);
    ids.push(r.body.session_id);
  }
  const theirs = await api.post(CONNECT, { agent_id: globex.agent_id }, globex.sk);

  await t.step("sessions.get returns the record", async () => {
    const r = await api.admin("/api/v1/sessions.get", { session_id: ids[0] });
    assertEquals(r.status, 200);
    assertEquals(r.body.status, "created");
    assertEquals(r.body.agent_id, acme.agent_id);
    assertEquals(r.body.tenant, "acme");
    assertEquals(r.body.display_name, "call 0");
    assertEquals(r.body.metadata, { n: "0" });
    assertEquals(r.body.agent_input.init, { i: 0 });
    assertEquals(r.body.recording, { requested: null, effective: false, url: null });
    assertEquals(r.body.usage, {
      call_seconds: 0,
      recognised_seconds: 0,
      synthesized_characters: 0,
      by_engine: {},
    });
    assertEquals(r.body.log, []);
    assert(r.body.timings.created_at);
    assertEquals(r.body.node_id, "node-test-1");
  });

  await t.step(
    "an sk_ key reads its own agent's sessions; another workspace's is 404",
    async () => {
      assertEquals(
        (await api.post("/api/v1/sessions.get", { session_id: ids[1] }, acme.sk)).status,
        200,
      );
      const cross = await api.post(
        "/api/v1/sessions.get",
        { session_id: theirs.body.session_id },
        acme.sk,
      );
      assertEquals([cross.status, cross.body.error.code], [404, "session_not_found"]);
      const list = await api.post("/api/v1/sessions.list", {}, acme.sk);
      assertEquals(list.body.sessions.length, 5);
      const other = await api.post("/api/v1/sessions.list", { agent_id: globex.agent_id }, acme.sk);
      assertEquals([other.status, other.body.error.code], [404, "agent_not_found"]);
    },
  );

  await t.step("sessions.list pages newest first with a cursor and filters by status", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const r = await api.admin("/api/v1/sessions.list", {
        agent_id: acme.agent_id,
        limit: 2,
        ...(cursor ? { cursor } : {}),
      });
      assertEquals(r.status, 200);
      seen.push(...r.body.sessions.map((s: { session_id: string }) => s.session_id));
      cursor = r.body.next_cursor;
    } while (cursor);
    assertEquals(seen.length, 5);
    assertEquals(new Set(seen), new Set(ids));
    const ended = await api.admin("/api/v1/sessions.list", { status: "ended" });
    assertEquals(ended.body.sessions, []);
    const bad = await api.admin("/api/v1/sessions.list", { status: "nope" });
    assertEquals([bad.status, bad.body.error.details.field], [400, "status"]);
    const badCursor = await api.admin("/api/v1/sessions.list", { cursor: "!!" });
    assertEquals([badCursor.status, badCursor.body.error.details.field], [400, "cursor"]);
  });

  await t.step("sessions.create returns a created record and reserves no node", async () => {
    const r = await api.post("/api/v1/sessions.create", {
      agent_id: acme.agent_id,
      config: { tts: { voice: "VOICE_ARJUN" } },
      record: true,
    }, acme.sk);
    assertEquals(r.status, 200);
    assertEquals(r.body.status, "created");
    assertEquals(r.body.node_id, null);
    assertEquals(r.body.recording.effective, true);
    assertEquals(r.body.agent_input.config, { tts: { voice: "VOICE_ARJUN" } });
    assertEquals(r.body.webrtc_request_params, undefined);
    const byAdmin = await api.admin("/api/v1/sessions.create", { agent_id: globex.agent_id });
    assertEquals([byAdmin.status, byAdmin.body.agent_id], [200, globex.agent_id]);
    const refused = await api.post("/api/v1/sessions.create", {
      agent_id: acme.agent_id,
      config: { tts: { voice: "VOICE_X" } },
    }, acme.sk);
    assertEquals([refused.status, refused.body.error.code], [400, "unsupported_config"]);
  });

  await t.step("capabilities lists what the engines serve", async () => {
    const res = await fetch(`${api.url}/api/v1/capabilities`);
    const body = await res.json();
    assertEquals(body.voices, ["VOICE_ANANYA", "VOICE_ARJUN"]);
    assertEquals(body.stt_languages, ["LANGUAGE_EN"]);
    assert(body.tts_languages.includes("LANGUAGE_HI"));
    assertEquals(body.defaults, { voice: "VOICE_ANANYA", language: "LANGUAGE_EN" });
  });

  await t.step("a pk_ key created from the admin route works from its origin only", async () => {
    const r = await api.post(CONNECT, { agent_id: acme.agent_id }, acme.pk, {
      origin: PAGE_ORIGIN,
    });
    assertEquals(r.status, 200);
  });

  await api.close();
});
