// Console agents and keys: the secret key is shown once and never again; publishable keys take
// origins; revoking from the console stops the key at once.
import { assert, assertEquals, assertMatch } from "../../tests/helpers/assert.ts";
import { PAGE_ORIGIN, startTestApi } from "../../tests/helpers/api_server.ts";
import { signIn } from "../../tests/helpers/console_client.ts";

/** The text of the element holding a key shown once. */
const shownKey = (html: string) => /<code id="new-key"[^>]*>([^<]+)<\/code>/.exec(html)?.[1];

Deno.test("console agents and keys", async (t) => {
  const api = await startTestApi();
  const op = await signIn(api);
  let agentId = "", secret = "";
  try {
    await t.step("creating an agent shows its secret key once, with a copy button", async () => {
      const page = await op.post("/console/agents", {
        tenant: "acme",
        name: "Front desk",
        brain_url: "wss://brain.acme.example/voice",
        record_by_default: "on",
      });
      assertEquals(page.status, 200);
      secret = shownKey(page.html)!;
      assert(secret?.startsWith("sk_"), "no sk_ key on the page");
      assertMatch(page.html, /data-copy="new-key"/);
      const [agent] = await api.db.sql`select a.id, a.brain_url, a.record_by_default, w.name
        from agents a join workspaces w on w.id = a.workspace_id`;
      agentId = agent.id;
      assertEquals([agent.name, agent.brain_url, agent.record_by_default], [
        "acme",
        "wss://brain.acme.example/voice",
        true,
      ]);
      // The key works: it is the agent's secret key.
      const listed = await api.post("/api/v1/sessions.list", {}, secret);
      assertEquals(listed.status, 200);
    });

    await t.step("the agents list and agent page never show the key again", async () => {
      const list = await op.get("/console/agents");
      assertEquals(list.status, 200);
      assertMatch(list.html, /Front desk/);
      assertMatch(list.html, /wss:\/\/brain\.acme\.example\/voice/);
      const agentPage = await op.get(`/console/agents/${agentId}`);
      assertEquals(agentPage.status, 200);
      for (const html of [list.html, agentPage.html]) {
        assert(!html.includes(secret), "the secret key was shown again");
        assertEquals(shownKey(html), undefined);
      }
      assertMatch(agentPage.html, new RegExp(`${secret.slice(0, 9)}…`)); // the prefix only
    });

    await t.step("the list filters by workspace", async () => {
      await op.post("/console/agents", { tenant: "globex", name: "Sales", brain_url: "echo:" });
      const acme = await op.get("/console/agents?tenant=acme");
      assertMatch(acme.html, /Front desk/);
      assert(!acme.html.includes(">Sales<"), "globex agent in acme's list");
      const all = await op.get("/console/agents");
      assertMatch(all.html, />Sales</);
    });

    await t.step("a bad brain URL is refused with the reason and nothing is made", async () => {
      const page = await op.post("/console/agents", {
        tenant: "acme",
        name: "Broken",
        brain_url: "https://not-a-websocket.example",
      });
      assertEquals(page.status, 400);
      assertMatch(page.html, /must be a ws:\/\/ or wss:\/\/ URL/);
      assertMatch(page.html, /value="Broken"/); // the form keeps what was typed
      assertEquals((await api.db.sql`select count(*)::int as n from agents`)[0].n, 2);
    });

    await t.step(
      "turn sensitivity other than low, medium or high is refused; nothing saved",
      async () => {
        const page = await op.post(`/console/agents/${agentId}`, {
          name: "Front desk",
          brain_url: "wss://brain2.acme.example/voice",
          turn_patience: "forever",
        });
        assertEquals(page.status, 400);
        assertMatch(
          page.html,
          /turn_patience is &quot;forever&quot;; it must be one of low, medium, high/,
        );
        const [row] = await api.db.sql`select brain_url from agents where id = ${agentId}`;
        assertEquals(row.brain_url, "wss://brain.acme.example/voice");
      },
    );

    await t.step(
      "agent settings: brain URL, recording default and turn sensitivity are saved",
      async () => {
        const saved = await op.post(`/console/agents/${agentId}`, {
          name: "Front desk",
          brain_url: "wss://brain2.acme.example/voice",
          interruption_sensitivity: "high",
        });
        assertEquals([saved.status, saved.location], [303, `/console/agents/${agentId}?saved=1`]);
        const [row] = await api.db.sql`select brain_url, record_by_default,
        interruption_sensitivity, turn_patience from agents where id = ${agentId}`;
        assertEquals(
          [row.brain_url, row.record_by_default, row.interruption_sensitivity, row.turn_patience],
          ["wss://brain2.acme.example/voice", false, "high", "medium"],
        );
        const page = await op.get(`/console/agents/${agentId}`);
        assertMatch(page.html, /<option value="high" selected[^>]*>high<\/option>/);
      },
    );

    let pkId = "";
    await t.step("a publishable key is made with its origins and shown once", async () => {
      const page = await op.post(`/console/agents/${agentId}/keys`, {
        kind: "publishable",
        origins: `${PAGE_ORIGIN}\nhttps://App.Acme.example`,
      });
      assertEquals(page.status, 200);
      const pk = shownKey(page.html)!;
      assert(pk.startsWith("pk_"));
      const [row] = await api.db.sql`select id, allowed_origins from api_keys
        where agent_id = ${agentId} and kind = 'publishable'`;
      pkId = row.id;
      assertEquals(row.allowed_origins, [PAGE_ORIGIN, "https://app.acme.example"]);
      const again = await op.get(`/console/agents/${agentId}`);
      assert(!again.html.includes(pk));
      assertMatch(again.html, /https:\/\/app\.acme\.example/);
      // The key starts calls from its origin.
      const r = await api.post("/api/v1/sessions.connect", { agent_id: agentId }, pk, {
        origin: PAGE_ORIGIN,
      });
      assertEquals(r.status, 200);
    });

    await t.step("a key form with a path, or a pk with no origin, is refused", async () => {
      for (
        const [origins, reason] of [
          ["https://app.acme.example/path", /is not an origin/],
          ["", /at least one allowed origin/],
        ] as const
      ) {
        const page = await op.post(`/console/agents/${agentId}/keys`, {
          kind: "publishable",
          origins,
        });
        assertEquals(page.status, 400);
        assertMatch(page.html, reason);
      }
      const n = await api.db.sql`select count(*)::int as n from api_keys
        where agent_id = ${agentId}`;
      assertEquals(n[0].n, 2);
    });

    await t.step("revoking a key marks it revoked and stops it at once", async () => {
      const [sk] = await api.db.sql`select id from api_keys
        where agent_id = ${agentId} and kind = 'secret'`;
      const r = await op.post(`/console/agents/${agentId}/keys/${sk.id}/revoke`, {});
      assertEquals([r.status, r.location], [303, `/console/agents/${agentId}#key-${sk.id}`]);
      const [row] = await api.db.sql`select revoked_at from api_keys where id = ${sk.id}`;
      assert(row.revoked_at instanceof Date);
      const refused = await api.post("/api/v1/sessions.list", {}, secret);
      assertEquals([refused.status, refused.body.error.code], [401, "invalid_api_key"]);
      const page = await op.get(`/console/agents/${agentId}`);
      const keyRow = new RegExp(`id="key-${sk.id}"[\\s\\S]*?</tr>`).exec(page.html)![0];
      assertMatch(keyRow, /revoked/);
      assert(!keyRow.includes("Revoke</button>"));
      // The publishable key is untouched; another agent's key cannot be revoked through this one.
      const [other] = await api.db.sql`select id from api_keys where agent_id != ${agentId}`;
      const wrong = await op.post(`/console/agents/${agentId}/keys/${other.id}/revoke`, {});
      assertEquals(wrong.status, 404);
      const live = await api.db.sql`select id from api_keys where revoked_at is null`;
      assertEquals(live.map((k) => k.id).sort(), [other.id, pkId].sort());
    });
  } finally {
    await api.close();
  }
});
