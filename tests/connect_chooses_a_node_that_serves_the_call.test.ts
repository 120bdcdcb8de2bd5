// Nodes register what their speech engines serve; sessions.connect only accepts what a live node
// serves and only reserves on a node that serves the call's voice and both languages, and
// /api/v1/capabilities follows the live nodes.
import { assert, assertEquals } from "./helpers/assert.ts";
import { makeTenant, startTestApi } from "./helpers/api_server.ts";
import { registerNode } from "../db/nodes.ts";
import type { ServeMatrix } from "../common/capabilities.ts";

const CONNECT = "/api/v1/sessions.connect";
const local = (engine: string) => [{ engine, kind: "local" as const }];
const provider = (engine: string) => [{ engine, kind: "provider" as const }];

/** A node whose provider engines recognise and speak Hindi (both personas) and nothing else. */
const HINDI: ServeMatrix = {
  LANGUAGE_HI: {
    stt: provider("sarvam-saaras"),
    tts: { VOICE_ANANYA: provider("sarvam-bulbul"), VOICE_ARJUN: provider("sarvam-bulbul") },
  },
};
/** A node with the local engines' English only. */
const ENGLISH: ServeMatrix = {
  LANGUAGE_EN: {
    stt: local("pocketsphinx"),
    tts: { VOICE_ANANYA: local("espeak-ng"), VOICE_ARJUN: local("espeak-ng") },
  },
};
const hindiCall = {
  config: {
    tts: { voice: "VOICE_ARJUN", language: "LANGUAGE_HI" },
    stt: { language: "LANGUAGE_HI" },
  },
};

async function capabilitiesUntil(
  url: string,
  // deno-lint-ignore no-explicit-any
  ok: (body: any) => boolean,
  // deno-lint-ignore no-explicit-any
): Promise<any> {
  const until = Date.now() + 5000;
  for (;;) {
    const body = await (await fetch(`${url}/api/v1/capabilities`)).json();
    if (ok(body)) return body;
    if (Date.now() > until) throw new Error(`capabilities never matched: ${JSON.stringify(body)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

Deno.test("connect sends each call to a node that serves its speech", async (t) => {
  const api = await startTestApi({}, { node: false });
  const acme = await makeTenant(api);
  await registerNode(api.db.sql, {
    node_id: "hindi",
    offer_base_url: "http://127.0.0.1:1001",
    capacity: 10,
    serves: HINDI,
  });
  await registerNode(api.db.sql, {
    node_id: "english",
    offer_base_url: "http://127.0.0.1:1002",
    capacity: 10,
    serves: ENGLISH,
  });

  await t.step("capabilities merge the live nodes, engines and kinds named", async () => {
    const body = await capabilitiesUntil(api.url, (b) => b.live_nodes === 2);
    assertEquals(body.stt_languages, ["LANGUAGE_EN", "LANGUAGE_HI"]);
    assertEquals(body.tts_languages, ["LANGUAGE_EN", "LANGUAGE_HI"]);
    assertEquals(body.languages.LANGUAGE_HI, HINDI.LANGUAGE_HI);
    assertEquals(body.languages.LANGUAGE_EN, ENGLISH.LANGUAGE_EN);
  });

  await t.step("two nodes with different engines each get only the calls they serve", async () => {
    for (let i = 0; i < 3; i++) {
      const hi = await api.post(CONNECT, { agent_id: acme.agent_id, ...hindiCall }, acme.sk);
      assertEquals(hi.status, 200, JSON.stringify(hi.body));
      assertEquals(new URL(hi.body.webrtc_request_params.endpoint).port, "1001");
      const en = await api.post(CONNECT, { agent_id: acme.agent_id }, acme.sk);
      assertEquals(en.status, 200, JSON.stringify(en.body));
      assertEquals(new URL(en.body.webrtc_request_params.endpoint).port, "1002");
    }
    const loads = await api.db.sql`select id, active_calls from worker_nodes order by id`;
    assertEquals(loads.map((r) => [r.id, r.active_calls]), [["english", 3], ["hindi", 3]]);
  });

  await t.step(
    "legs served on different nodes but not on one are refused, naming a leg",
    async () => {
      const r = await api.post(CONNECT, {
        agent_id: acme.agent_id,
        config: {
          tts: { voice: "VOICE_ANANYA", language: "LANGUAGE_HI" },
          stt: { language: "LANGUAGE_EN" },
        },
      }, acme.sk);
      assertEquals([r.status, r.body.error.code], [400, "unsupported_config"]);
      assertEquals(r.body.error.details.field, "config.stt.language");
    },
  );

  await t.step("a language served only by a node that went stale is refused", async () => {
    const [before] = await api.db.sql`select count(*)::int as n from sessions`;
    await api.db.sql`update worker_nodes set heartbeat_at = now() - interval '1 minute'
      where id = 'hindi'`;
    const body = await capabilitiesUntil(api.url, (b) => b.live_nodes === 1);
    assertEquals(body.stt_languages, ["LANGUAGE_EN"]);
    assertEquals(body.languages.LANGUAGE_HI, undefined);
    const r = await api.post(CONNECT, { agent_id: acme.agent_id, ...hindiCall }, acme.sk);
    assertEquals([r.status, r.body.error.code], [400, "unsupported_config"]);
    assertEquals(r.body.error.details.field, "config.tts.language");
    assertEquals(r.body.error.details.allowed, ["LANGUAGE_EN"]);
    // A refusal writes nothing.
    const [after] = await api.db.sql`select count(*)::int as n from sessions`;
    assertEquals(after.n, before.n);
  });

  await t.step("the node coming back brings its languages back", async () => {
    await api.db.sql`update worker_nodes set heartbeat_at = now() where id = 'hindi'`;
    await capabilitiesUntil(api.url, (b) => b.live_nodes === 2);
    const r = await api.post(CONNECT, { agent_id: acme.agent_id, ...hindiCall }, acme.sk);
    assertEquals(r.status, 200);
    assertEquals(new URL(r.body.webrtc_request_params.endpoint).port, "1001");
  });

  await t.step(
    "with no live node at all, roster names pass and the call finds no worker",
    async () => {
      await api.db.sql`update worker_nodes set draining = true`;
      await capabilitiesUntil(api.url, (b) => b.live_nodes === 0);
      const r = await api.post(CONNECT, { agent_id: acme.agent_id, ...hindiCall }, acme.sk);
      assertEquals([r.status, r.body.error.code], [500, "missing_connect_params"]);
      const bad = await api.post(CONNECT, {
        agent_id: acme.agent_id,
        config: { tts: { voice: "VOICE_NOBODY" } },
      }, acme.sk);
      assertEquals([bad.status, bad.body.error.code], [400, "unsupported_config"]);
      assert(bad.body.error.details.allowed.includes("VOICE_ARJUN"));
    },
  );

  await api.close();
});
