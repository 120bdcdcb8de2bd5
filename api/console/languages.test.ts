// Console languages: the live nodes' matrices merged, one row per roster language with each
// leg's engines in routing order and local/provider marked, unserved languages marked; and the
// nodes table with each node's state and per-leg language counts.
import { assert, assertEquals, assertMatch } from "../../tests/helpers/assert.ts";
import { startTestApi } from "../../tests/helpers/api_server.ts";
import { heartbeat, registerNode } from "../../db/nodes.ts";
import type { ServeMatrix } from "../../common/capabilities.ts";
import { signIn } from "../../tests/helpers/console_client.ts";

const local = (engine: string) => ({ engine, kind: "local" as const });
const provider = (engine: string) => ({ engine, kind: "provider" as const });

// Node a: English locally, Hindi heard and spoken in Ananya by providers (espeak-ng behind).
const NODE_A: ServeMatrix = {
  LANGUAGE_EN: {
    stt: [local("pocketsphinx")],
    tts: { VOICE_ANANYA: [local("espeak-ng")], VOICE_ARJUN: [local("espeak-ng")] },
  },
  LANGUAGE_HI: {
    stt: [provider("sarvam-saaras")],
    tts: { VOICE_ANANYA: [provider("sarvam-bulbul"), local("espeak-ng")] },
  },
};
// Node b: Hindi in Arjun and Tamil in Arjun only, nothing heard.
const NODE_B: ServeMatrix = {
  LANGUAGE_HI: { tts: { VOICE_ARJUN: [local("espeak-ng")] } },
  LANGUAGE_TA: { tts: { VOICE_ARJUN: [local("espeak-ng")] } },
};
// Node c goes stale: its Santali must not count as served.
const NODE_C: ServeMatrix = { LANGUAGE_SAT: { stt: [provider("sarvam-saaras")] } };

/** The text of one element (by an attribute's value) inside `html`, tags dropped. */
function textOf(html: string, open: RegExp): string {
  const m = open.exec(html);
  assert(m, `no ${open} on the page`);
  const tag = m[0].slice(1).split(/[\s>]/)[0];
  const end = html.indexOf(`</${tag}>`, m.index);
  return html.slice(m.index, end).replace(/<[^>]+>/g, " ").replace(/\s+/g, " ").trim();
}
const row = (html: string, language: string) =>
  html.slice(html.indexOf(`<tr data-language="${language}"`)).split("</tr>")[0];
const cell = (html: string, language: string, leg: string) =>
  textOf(row(html, language), new RegExp(`<td data-leg="${leg}"`));

Deno.test("console languages page", async (t) => {
  const api = await startTestApi({}, { node: false });
  try {
    await registerNode(api.db.sql, {
      node_id: "node-a",
      offer_base_url: "http://127.0.0.1:9/a",
      capacity: 40,
      serves: NODE_A,
    });
    await registerNode(api.db.sql, {
      node_id: "node-b",
      offer_base_url: "http://127.0.0.1:9/b",
      capacity: 8,
      serves: NODE_B,
    });
    await registerNode(api.db.sql, {
      node_id: "node-c",
      offer_base_url: "http://127.0.0.1:9/c",
      capacity: 5,
      serves: NODE_C,
    });
    await api.db.sql`update worker_nodes set heartbeat_at = now() - interval '1 hour'
      where id = 'node-c'`;
    const op = await signIn(api);
    const page = await op.get("/console/languages");

    await t.step("it is in the console's navigation", () => {
      assertEquals(page.status, 200);
      assertMatch(page.html, /<a href="\/console\/languages">Languages<\/a>/);
    });

    await t.step("each language shows its engines per leg, in routing order, kind marked", () => {
      assertEquals(cell(page.html, "LANGUAGE_HI", "stt"), "sarvam-saaras provider");
      assertEquals(
        cell(page.html, "LANGUAGE_HI", "VOICE_ANANYA"),
        "sarvam-bulbul provider espeak-ng local",
      );
      // Merged over the nodes: Arjun's Hindi comes from node b.
      assertEquals(cell(page.html, "LANGUAGE_HI", "VOICE_ARJUN"), "espeak-ng local");
      assertEquals(cell(page.html, "LANGUAGE_EN", "stt"), "pocketsphinx local");
      assertMatch(row(page.html, "LANGUAGE_HI"), /Hindi/);
      // A language spoken but not heard, and in one persona only, is served, with gaps.
      assertEquals(cell(page.html, "LANGUAGE_TA", "stt"), "—");
      assertEquals(cell(page.html, "LANGUAGE_TA", "VOICE_ANANYA"), "—");
      assertEquals(cell(page.html, "LANGUAGE_TA", "VOICE_ARJUN"), "espeak-ng local");
      assert(!row(page.html, "LANGUAGE_TA").includes("not served"));
    });

    await t.step("every roster language has a row; unserved ones are marked", () => {
      assertEquals([...page.html.matchAll(/<tr data-language=/g)].length, 23);
      assertMatch(row(page.html, "LANGUAGE_SA"), /Sanskrit.*not served/s);
      // Only a stale node serves Santali: not served.
      assertMatch(row(page.html, "LANGUAGE_SAT"), /Santali.*not served/s);
      assertEquals(cell(page.html, "LANGUAGE_SAT", "stt"), "—");
      assert(!row(page.html, "LANGUAGE_HI").includes("not served"));
      assertMatch(page.html, /What 2 live nodes serve: 2 of 23 languages recognised, 3\s+spoken/);
    });

    await t.step("the nodes table: state, capacity, calls, languages per leg", async () => {
      await heartbeat(api.db.sql, "node-b", { draining: true });
      const html = (await op.get("/console/languages")).html;
      assertMatch(textOf(html, /<tr data-node="node-a"/), /^node-a live 40 0 2 2 /);
      assertMatch(textOf(html, /<tr data-node="node-b"/), /^node-b draining 8 0 0 2 /);
      assertMatch(textOf(html, /<tr data-node="node-c"/), /^node-c stale 5 0 1 0 /);
    });
  } finally {
    await api.close();
  }
});
