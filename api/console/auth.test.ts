// Console sign-in: the cookie, the redirect to sign-in, the wrong token, the CSRF defence.
import { assert, assertEquals, assertMatch } from "../../tests/helpers/assert.ts";
import { startTestApi } from "../../tests/helpers/api_server.ts";
import { safeNext, signSessionCookie, verifySessionCookie } from "./auth.ts";
import { consoleClient, consoleCookie, signIn } from "../../tests/helpers/console_client.ts";

const TOKEN = "adm_test_token_0123456789";

Deno.test("a session cookie is valid only for its admin token and until its expiry", () => {
  const now = 1_700_000_000;
  const value = signSessionCookie(TOKEN, now + 60);
  assert(verifySessionCookie(value, TOKEN, now));
  assert(!verifySessionCookie(value, TOKEN, now + 61), "expired cookie accepted");
  assert(!verifySessionCookie(value, "adm_other_token", now), "other token's cookie accepted");
  const [expiry, mac] = value.split(".");
  assert(!verifySessionCookie(`${Number(expiry) + 3600}.${mac}`, TOKEN, now), "moved expiry");
  const other = mac[5] === "A" ? "B" : "A";
  assert(!verifySessionCookie(`${expiry}.${mac.slice(0, 5)}${other}${mac.slice(6)}`, TOKEN, now));
  assert(!verifySessionCookie(undefined, TOKEN, now));
  assert(!verifySessionCookie(TOKEN, TOKEN, now), "the token itself is not a cookie");
  assert(!value.includes(TOKEN));
});

Deno.test("sign-in sends the operator back to console pages only", () => {
  assertEquals(safeNext("/console/agents?tenant=a"), "/console/agents?tenant=a");
  for (const bad of ["https://evil.test/", "//evil.test/console", "/console//evil", "/api/v1/x"]) {
    assertEquals(safeNext(bad), "/console/sessions", bad);
  }
});

Deno.test("console sign-in", async (t) => {
  const api = await startTestApi();
  try {
    await t.step("every console page redirects to sign-in without the cookie", async () => {
      const anon = consoleClient(api);
      for (const path of ["/console", "/console/agents", "/console/sessions?status=ended"]) {
        const page = await anon.get(path);
        assertEquals(page.status, 303, path);
        assertEquals(
          page.location,
          `/console/sign-in?next=${encodeURIComponent(path === "/console" ? "/console" : path)}`,
        );
      }
      const post = await anon.post("/console/agents", {
        tenant: "a",
        name: "b",
        brain_url: "echo:",
      });
      assertEquals([post.status, post.location], [303, "/console/sign-in"]);
      const forged = consoleClient(api, `console_session=${signSessionCookie("x", 9e9)}`);
      assertEquals((await forged.get("/console/agents")).status, 303);
      assertEquals((await api.db.sql`select count(*)::int as n from agents`)[0].n, 0);
    });

    await t.step("a wrong token is refused with 401 and no cookie", async () => {
      const anon = consoleClient(api);
      for (const token of ["", "adm_test_token_012345678", TOKEN + "x", "sk_whatever"]) {
        const page = await anon.post("/console/sign-in", { token });
        assertEquals(page.status, 401, token);
        assertEquals(consoleCookie(page), undefined);
        assertMatch(page.html, /not the admin token/);
      }
    });

    await t.step(
      "the admin token sets an HttpOnly SameSite=Strict cookie for /console",
      async () => {
        const anon = consoleClient(api);
        const page = await anon.post("/console/sign-in", {
          token: TOKEN,
          next: "/console/agents",
        });
        assertEquals([page.status, page.location], [303, "/console/agents"]);
        const set = page.headers.getSetCookie().find((c) => c.startsWith("console_session="))!;
        assertMatch(set, /HttpOnly/);
        assertMatch(set, /SameSite=Strict/);
        assertMatch(set, /Path=\/console(;|$)/);
        assert(!set.includes(TOKEN), "cookie holds the token");
        anon.cookie = consoleCookie(page);
        const agents = await anon.get("/console/agents");
        assertEquals(agents.status, 200);
        assertEquals(agents.headers.get("cache-control"), "no-store");
        assertMatch(agents.headers.get("content-security-policy")!, /script-src 'self'/);
      },
    );

    await t.step("a POST from another origin, or with no origin, is refused", async () => {
      const op = await signIn(api);
      const cross = await op.post("/console/agents", {
        tenant: "a",
        name: "b",
        brain_url: "echo:",
      }, { origin: "https://evil.example" });
      assertEquals(cross.status, 403);
      const nullOrigin = await op.post("/console/sign-out", {}, { origin: "null" });
      assertEquals(nullOrigin.status, 403);
      const noOrigin = await fetch(api.url + "/console/sign-in", {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ token: TOKEN }),
      });
      assertEquals(noOrigin.status, 403);
      await noOrigin.body?.cancel();
      const sameSite = await fetch(api.url + "/console/sign-in", {
        method: "POST",
        redirect: "manual",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          "sec-fetch-site": "same-origin",
        },
        body: new URLSearchParams({ token: TOKEN }),
      });
      assertEquals(sameSite.status, 303);
      await sameSite.body?.cancel();
      // A page on another port of this host is same-site: its posts carry the cookie.
      const otherPort = await op.post("/console/sign-out", {}, { "sec-fetch-site": "same-site" });
      assertEquals(otherPort.status, 403);
      assertEquals((await api.db.sql`select count(*)::int as n from agents`)[0].n, 0);
    });

    await t.step("sign-out clears the cookie", async () => {
      const op = await signIn(api);
      const out = await op.post("/console/sign-out", {});
      assertEquals([out.status, out.location], [303, "/console/sign-in?out=1"]);
      const cleared = out.headers.getSetCookie().find((c) => c.startsWith("console_session="))!;
      assertMatch(cleared, /Max-Age=0/);
    });
  } finally {
    await api.close();
  }
});
