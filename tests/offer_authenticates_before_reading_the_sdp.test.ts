// The offer endpoint looks at the credential before the body: a spent session token is refused
// as spent (401 token_used) whatever the offer holds, while a bad offer from the token's rightful
// holder is a 400 that leaves the token unspent. PATCH (trickled candidates) likewise.
import { assert, assertEquals } from "./helpers/assert.ts";
import { makeTenant, readReply, startTestApi, type TestApi } from "./helpers/api_server.ts";
import { startWorkerProcess, type WorkerProcess } from "./helpers/process.ts";
import { TestCaller } from "../caller/caller.ts";

const CONNECT = "/api/v1/sessions.connect";
const badSdp = { type: "offer", sdp: "v=0\r\n", pc_id: null, restart_pc: false };

async function connect(api: TestApi, sk: string, agentId: string) {
  const r = await api.post(CONNECT, { agent_id: agentId }, sk);
  assertEquals(r.status, 200, JSON.stringify(r.body));
  return {
    session_id: r.body.session_id as string,
    endpoint: r.body.webrtc_request_params.endpoint as string,
    token: (r.body.webrtc_request_params.headers.Authorization as string).slice(7),
  };
}

async function send(method: "POST" | "PATCH", url: string, token: string, body: unknown) {
  return readReply(
    await fetch(url, {
      method,
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: typeof body === "string" ? body : JSON.stringify(body),
    }),
  );
}

function refused(
  r: { status: number; body: { error?: { code?: string } } },
  status: number,
  code: string,
) {
  assertEquals([r.status, r.body?.error?.code], [status, code], JSON.stringify(r.body));
}

Deno.test("the offer endpoint authenticates before it reads the SDP", async (t) => {
  const api = await startTestApi({}, { node: false });
  let worker: WorkerProcess | undefined;
  const callers: TestCaller[] = [];
  try {
    worker = await startWorkerProcess(api.db.url, "node-auth");
    const acme = await makeTenant(api, "acme", { brain_url: "echo:" });

    await t.step(
      "an unused token with a malformed SDP: 400 invalid_sdp, token unspent",
      async () => {
        const p = await connect(api, acme.sk, acme.agent_id);
        refused(await send("POST", p.endpoint, p.token, badSdp), 400, "invalid_sdp");
        refused(await send("POST", p.endpoint, p.token, "{nope"), 400, "invalid_request");
        const [row] = await api.db.sql`select status from sessions where id = ${p.session_id}`;
        assertEquals(row.status, "created");
        const caller = await TestCaller.connect({
          offerUrl: p.endpoint,
          headers: { Authorization: `Bearer ${p.token}` },
        });
        callers.push(caller);
        await caller.ready();
      },
    );

    await t.step("a spent token with a malformed SDP: 401 token_used", async (s) => {
      const p = await connect(api, acme.sk, acme.agent_id);
      const caller = await TestCaller.connect({
        offerUrl: p.endpoint,
        headers: { Authorization: `Bearer ${p.token}` },
      });
      callers.push(caller);
      await caller.ready();

      await s.step("while its call runs", async () => {
        refused(await send("POST", p.endpoint, p.token, badSdp), 401, "token_used");
        refused(await send("POST", p.endpoint, p.token, "{nope"), 401, "token_used");
        refused(
          await send("POST", p.endpoint, p.token, { ...badSdp, pc_id: "someone-else" }),
          401,
          "token_used",
        );
        // The connection the token started is still its holder: its own bad offer is a 400.
        refused(
          await send("POST", p.endpoint, p.token, {
            ...badSdp,
            pc_id: caller.pcId,
            restart_pc: true,
          }),
          400,
          "invalid_sdp",
        );
      });

      await caller.hangUp();
      const until = Date.now() + 8000;
      while (Date.now() < until) {
        const [row] = await api.db.sql`select status from sessions where id = ${p.session_id}`;
        if (row.status === "ended" || row.status === "failed") break;
        await new Promise((r) => setTimeout(r, 50));
      }

      await s.step("after its call ended", async () => {
        refused(await send("POST", p.endpoint, p.token, badSdp), 401, "token_used");
        refused(await send("POST", p.endpoint, p.token, "{nope"), 401, "token_used");
        refused(await send("POST", p.endpoint, p.token, { type: "answer" }), 401, "token_used");
      });

      await s.step("PATCH with a spent token and a malformed body: 401 token_used", async () => {
        refused(await send("PATCH", p.endpoint, p.token, "{nope"), 401, "token_used");
        refused(
          await send("PATCH", p.endpoint, p.token, { pc_id: caller.pcId, candidates: 7 }),
          401,
          "token_used",
        );
      });
    });

    await t.step("PATCH before any offer: 404 peer_not_found, token unspent", async () => {
      const p = await connect(api, acme.sk, acme.agent_id);
      refused(
        await send("PATCH", p.endpoint, p.token, { pc_id: "x", candidates: [] }),
        404,
        "peer_not_found",
      );
      const [row] = await api.db.sql`select status from sessions where id = ${p.session_id}`;
      assertEquals(row.status, "created");
    });

    await t.step("PATCH from the running call's holder: body checked after the token", async () => {
      const p = await connect(api, acme.sk, acme.agent_id);
      const caller = await TestCaller.connect({
        offerUrl: p.endpoint,
        headers: { Authorization: `Bearer ${p.token}` },
      });
      callers.push(caller);
      await caller.ready();
      refused(
        await send("PATCH", p.endpoint, p.token, { pc_id: caller.pcId, candidates: 7 }),
        400,
        "invalid_request",
      );
      refused(
        await send("PATCH", p.endpoint, p.token, { pc_id: "not-this-one", candidates: [] }),
        404,
        "peer_not_found",
      );
      const ok = await send("PATCH", p.endpoint, p.token, { pc_id: caller.pcId, candidates: [] });
      assertEquals(ok.status, 200);
      assert(ok.body.status === "success");
    });
  } finally {
    for (const c of callers) await c.hangUp();
    await worker?.stop();
    await api.close();
  }
});
