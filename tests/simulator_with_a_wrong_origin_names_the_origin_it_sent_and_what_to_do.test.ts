// `deno task call` with a pk_ key refused for its origin: the failure names the Origin it sent
// (or that it sent none), and the command says what to do, rather than a bare 403.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { makeTenant, startTestApi } from "./helpers/api_server.ts";
import { runCall } from "../cli/call.ts";

async function call(args: string[]) {
  const out: string[] = [], err: string[] = [];
  const code = await runCall(args, {}, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

Deno.test("the simulator with a wrong --origin names the origin it sent and what to do", async () => {
  const api = await startTestApi();
  try {
    const tenant = await makeTenant(api); // its pk_ key allows PAGE_ORIGIN only
    const base = ["--api", api.url, "--agent", tenant.agent_id, "--key", tenant.pk];
    const wrong = "https://shop.example";

    const r = await call([...base, "--origin", wrong]);
    assertEquals(r.code, 2);
    assertMatch(
      r.out,
      new RegExp(
        "FAILED \\(connect refused\\): HTTP 403 origin_not_allowed: This publishable key may " +
          "not be used from this origin\\. \\(sent with Origin https://shop\\.example, which is " +
          "not on the key's allowlist\\)",
      ),
    );
    assertEquals(
      r.err,
      `call: the key does not allow the origin ${wrong}: pass --origin with an origin on its ` +
        "allowlist (`ADMIN_TOKEN=... deno task admin keys list --agent-id " +
        `${tenant.agent_id} --api-url ${api.url}\` shows each key's allowed_origins), or use ` +
        "the agent's sk_ key, which needs none.",
    );
    assert(!r.out.includes(tenant.pk) && !r.err.includes(tenant.pk), "the key is never printed");

    const none = await call(base);
    assertEquals(none.code, 2);
    assertMatch(
      none.out,
      /\(sent without an Origin header: a pk_ key needs one on its allowlist\)/,
    );
    assertMatch(none.err, /^call: a pk_ key needs --origin set to an origin on its allowlist/);
  } finally {
    await api.close();
  }
});
