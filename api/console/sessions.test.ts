// Console sessions: the list (display names, filters, paging) and a session's page rendered from
// a realistic turn record and log, and from records with none.
import { assert, assertEquals, assertMatch } from "../../tests/helpers/assert.ts";
import { makeTenant, startTestApi } from "../../tests/helpers/api_server.ts";
import { newId } from "../../common/ids.ts";
import { SESSION_EVENTS } from "../../common/session_event_meanings.ts";
import { signIn } from "../../tests/helpers/console_client.ts";
import { SAMPLE_LATENCIES, seedSession } from "../../tests/helpers/sample_session.ts";

/** The session ids of the list's rows, in page order. */
const rowIds = (html: string) =>
  [...html.matchAll(/<a href="\/console\/sessions\/(ses_[A-Za-z0-9]+)">/g)].map((m) => m[1]);
const nextLink = (html: string) =>
  /<a rel="next" href="([^"]+)"/.exec(html)?.[1]?.replaceAll("&amp;", "&");

Deno.test("console sessions list", async (t) => {
  const api = await startTestApi();
  const op = await signIn(api);
  try {
    const acme = await makeTenant(api, "acme");
    const globex = await makeTenant(api, "globex");
    const base = Date.now() - 3_600_000;
    // Seven acme sessions a second apart (newest last), the middle one failed; one globex.
    const acmeIds: string[] = [];
    for (let i = 0; i < 7; i++) {
      const s = await seedSession(api.db.sql, {
        ...acme,
        display_name: i === 6 ? "Call with Ada" : null,
        created_at: new Date(base + i * 1000),
        status: i === 3 ? "failed" : "ended",
      });
      acmeIds.push(s.session_id);
    }
    const other = await seedSession(api.db.sql, {
      ...globex,
      created_at: new Date(base + 500),
    });

    await t.step("rows show the display name instead of the id when set", async () => {
      const page = await op.get(`/console/sessions?agent_id=${acme.agent_id}`);
      assertEquals(page.status, 200);
      const newest = new RegExp(`href="/console/sessions/${acmeIds[6]}">([^<]*)<`).exec(
        page.html,
      )!;
      assertEquals(newest[1], "Call with Ada");
      const plain = new RegExp(`href="/console/sessions/${acmeIds[5]}">([^<]*)<`).exec(
        page.html,
      )!;
      assertEquals(plain[1], acmeIds[5]);
      assertMatch(page.html, /24\.0 s/); // duration: started to ended
    });

    await t.step("filters by agent and by status", async () => {
      const byAgent = await op.get(`/console/sessions?agent_id=${globex.agent_id}`);
      assertEquals(rowIds(byAgent.html), [other.session_id]);
      const failed = await op.get(`/console/sessions?status=failed`);
      assertEquals(rowIds(failed.html), [acmeIds[3]]);
      const both = await op.get(`/console/sessions?agent_id=${acme.agent_id}&status=ended`);
      assertEquals(rowIds(both.html), acmeIds.filter((_, i) => i !== 3).reverse());
      const all = await op.get(`/console/sessions`);
      assertEquals(rowIds(all.html).length, 8);
    });

    await t.step("pages follow the cursor, newest first, keeping the filters", async () => {
      const seen: string[] = [];
      let url: string | undefined = `/console/sessions?agent_id=${acme.agent_id}&limit=3`;
      let pages = 0;
      while (url) {
        const page = await op.get(url);
        assertEquals(page.status, 200);
        const ids = rowIds(page.html);
        assert(ids.length > 0 && ids.length <= 3, `page of ${ids.length}`);
        seen.push(...ids);
        url = nextLink(page.html);
        if (url) assertMatch(url, new RegExp(`agent_id=${acme.agent_id}`));
        pages++;
      }
      assertEquals(pages, 3);
      assertEquals(seen, [...acmeIds].reverse());
    });
  } finally {
    await api.close();
  }
});

Deno.test("console session page", async (t) => {
  const api = await startTestApi();
  const op = await signIn(api);
  try {
    const acme = await makeTenant(api, "acme");
    const s = await seedSession(api.db.sql, { ...acme, display_name: "Call with Ada" });
    const page = await op.get(`/console/sessions/${s.session_id}`);
    assertEquals(page.status, 200);
    const html = page.html;

    await t.step("the transcript marks the heard part and strikes the cut-off part", () => {
      assertMatch(html, new RegExp(`<mark class="heard">${s.heard}</mark>`));
      const struck = /<s class="cut"[^>]*>([^<]*)<\/s>/.exec(html)!;
      assertEquals(struck[1], s.cut);
      assertMatch(html, new RegExp(`Caller</span>${s.said.replace("?", "\\?")}`));
      // A unit not cut off but not fully played: the rest is greyed, not struck.
      assertMatch(
        html,
        /<mark class="heard">Are you<\/mark><span class="unplayed"[^>]*> still there\?/,
      );
    });

    await t.step("each turn shows the latency of each step", () => {
      const row = /<tr data-turn="t1">[\s\S]*?<\/tr>/.exec(html)![0];
      for (const [step, ms] of Object.entries(SAMPLE_LATENCIES.t1)) {
        assertMatch(row, new RegExp(`data-latency="${step}">${ms} ms<`), step);
      }
      const greeting = /<tr data-turn="greeting">[\s\S]*?<\/tr>/.exec(html)![0];
      assertMatch(greeting, /data-latency="recognition">—</);
      assertMatch(greeting, /data-latency="brain">138 ms</);
      // The caller's own figure sits next to the worker's end of speech → first audio.
      assertMatch(
        row,
        /data-latency="end_to_first_audio">938 ms<\/td><td class="num" data-latency="heard_at_caller">1012 ms</,
      );
      assertMatch(greeting, /data-latency="heard_at_caller">—</);
    });

    await t.step("status, timings, usage, labels and the log are there", () => {
      assertMatch(html, /Call with Ada/);
      assertMatch(html, /badge s-ended">ended/);
      assertMatch(html, /caller_hung_up/);
      assertMatch(html, /<dd id="duration">24\.0 s<\/dd>/);
      assertMatch(html, /117/); // synthesized characters
      assertMatch(html, /T-1042/); // metadata
      // Each kind says what it means when hovered.
      const meaning = SESSION_EVENTS.to_brain.heard;
      assert(html.includes(`<td class="mono small" title="${meaning}">heard</td>`));
      // Log data is escaped, never markup.
      assert(!html.includes("<b>world</b>"));
      assertMatch(html, /&lt;b&gt;world&lt;\/b&gt;/);
    });

    await t.step("the log filters by source", async () => {
      const fromBrain = await op.get(`/console/sessions/${s.session_id}?source=from_brain`);
      const sources = [...fromBrain.html.matchAll(/<tr data-source="([^"]+)"/g)].map((m) => m[1]);
      assertEquals(sources, ["from_brain", "from_brain"]);
    });

    await t.step("a session with no turns, log, usage or recording still renders", async () => {
      const id = newId("ses");
      await api.db.sql`insert into sessions (id, agent_id, workspace_id, status, agent_input)
        values (${id}, ${acme.agent_id}, ${acme.workspace_id}, 'created', ${api.db.sql.json({})})`;
      const bare = await op.get(`/console/sessions/${id}`);
      assertEquals(bare.status, 200);
      assertMatch(bare.html, /No turns recorded/);
      assertMatch(bare.html, /Not recorded/);
      assertMatch(bare.html, /No log entries/);
      // Turns written by an older or partial worker: odd shapes are skipped, not fatal.
      await api.db.sql`update sessions set turns = ${
        api.db.sql.json([
          "junk",
          { turn_id: "t1", units: [{ text: "Hi there" }, 7], marks: "?" },
        ] as never)
      } where id = ${id}`;
      const odd = await op.get(`/console/sessions/${id}`);
      assertEquals(odd.status, 200);
      assertMatch(odd.html, /<mark class="heard">Hi there<\/mark>/);
    });

    await t.step("an unknown session is a 404 page", async () => {
      const missing = await op.get(`/console/sessions/ses_nope`);
      assertEquals(missing.status, 404);
      assertMatch(missing.html, /No such session/);
    });
  } finally {
    await api.close();
  }
});
