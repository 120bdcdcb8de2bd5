// The worker's offer endpoint refuses every bad session token and bad offer with the envelope,
// and tells a reuse apart from a renegotiation or a restart of the same call.
import { assert, assertEquals } from "./helpers/assert.ts";
import { makeTenant, readReply, startTestApi, type TestApi } from "./helpers/api_server.ts";
import { startWorkerProcess, type WorkerProcess } from "./helpers/process.ts";
import { CallerHttpError, TestCaller } from "../caller/caller.ts";
import { settingOrCreate } from "../db/service_settings.ts";
import { TokenSigner } from "../common/token.ts";

interface Params {
  session_id: string;
  endpoint: string;
  token: string;
}

async function connect(api: TestApi, sk: string, agentId: string): Promise<Params> {
  const r = await api.post("/api/v1/sessions.connect", { agent_id: agentId }, sk);
  assertEquals(r.status, 200, JSON.stringify(r.body));
  return {
    session_id: r.body.session_id,
    endpoint: r.body.webrtc_request_params.endpoint,
    token: r.body.webrtc_request_params.headers.Authorization.slice(7),
  };
}

async function offer(url: string, token: string | undefined, body: unknown) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  return readReply(
    await fetch(url, {
      method: "POST",
      headers,
      body: typeof body === "string" ? body : JSON.stringify(body),
    }),
  );
}

function refusal(
  r: { status: number; body: { error: { code: string }; info: string } },
  status: number,
  code: string,
) {
  assertEquals([r.status, r.body?.error?.code], [status, code], JSON.stringify(r.body));
  assert(typeof r.body.info === "string");
}

const fakeOffer = { type: "offer", sdp: "v=0\r\n", pc_id: null, restart_pc: false };

Deno.test("offer endpoint", async (t) => {
  const api = await startTestApi({}, { node: false });
  const workers: WorkerProcess[] = [];
  const callers: TestCaller[] = [];
  try {
    workers.push(await startWorkerProcess(api.db.url, "node-a"));
    const acme = await makeTenant(api, "acme", { brain_url: "echo:" });

    await t.step("no Authorization: 401 unauthorized", async () => {
      const p = await connect(api, acme.sk, acme.agent_id);
      refusal(await offer(p.endpoint, undefined, fakeOffer), 401, "unauthorized");
    });

    await t.step("bad signature: 401 invalid_token", async () => {
      const p = await connect(api, acme.sk, acme.agent_id);
      const [h, body, sig] = p.token.split(".");
      const forged = `${h}.${body}.${sig[0] === "A" ? "B" : "A"}${sig.slice(1)}`;
      refusal(await offer(p.endpoint, forged, fakeOffer), 401, "invalid_token");
    });

    await t.step("token for another session: 403 wrong_session", async () => {
      const a = await connect(api, acme.sk, acme.agent_id);
      const b = await connect(api, acme.sk, acme.agent_id);
      refusal(await offer(b.endpoint, a.token, fakeOffer), 403, "wrong_session");
    });

    await t.step("token for another node: 403 wrong_node", async () => {
      const p = await connect(api, acme.sk, acme.agent_id); // only node-a is live
      workers.push(await startWorkerProcess(api.db.url, "node-b"));
      const onB = `${workers[1].url}/sessions/${p.session_id}/offer`;
      refusal(await offer(onB, p.token, fakeOffer), 403, "wrong_node");
      await workers[1].stop();
    });

    await t.step("expired token: 401 token_expired", async () => {
      const jwk = await settingOrCreate(api.db.sql, "token_signing_key", () => "unused");
      const signer = await TokenSigner.fromJwk(jwk);
      const p = await connect(api, acme.sk, acme.agent_id);
      const past = Date.now() - 600_000;
      const { token } = await signer.mint(
        { sid: p.session_id, aud: "node-a", sub: acme.agent_id, ten: acme.workspace_id, input: {} },
        { jti: "tok_old", expiresAt: new Date(past + 300_000) },
        past,
      );
      refusal(await offer(p.endpoint, token, fakeOffer), 401, "token_expired");
    });

    await t.step("a session this node never had: 404 session_not_found", async () => {
      const jwk = await settingOrCreate(api.db.sql, "token_signing_key", () => "unused");
      const signer = await TokenSigner.fromJwk(jwk);
      const { token } = await signer.mint(
        {
          sid: "ses_nothere",
          aud: "node-a",
          sub: acme.agent_id,
          ten: acme.workspace_id,
          input: {},
        },
        { jti: "tok_x", expiresAt: new Date(Date.now() + 60_000) },
      );
      const caller = TestCaller.connect({
        offerUrl: `${workers[0].url}/sessions/ses_nothere/offer`,
        headers: { Authorization: `Bearer ${token}` },
      });
      const err = await caller.then(() => undefined, (e) => e);
      assert(err instanceof CallerHttpError);
      assertEquals(err.status, 404);
    });

    await t.step("bad offers are 4xx and do not burn the token", async () => {
      const p = await connect(api, acme.sk, acme.agent_id);
      refusal(await offer(p.endpoint, p.token, "{nope"), 400, "invalid_request");
      refusal(
        await offer(p.endpoint, p.token, { ...fakeOffer, type: "answer" }),
        400,
        "invalid_request",
      );
      refusal(await offer(p.endpoint, p.token, fakeOffer), 400, "invalid_sdp");
      refusal(
        await offer(p.endpoint, p.token, {
          ...fakeOffer,
          sdp: "v=0\r\n" + "a=x\r\n".repeat(20000),
        }),
        413,
        "request_too_large",
      );
      const caller = await TestCaller.connect({
        offerUrl: p.endpoint,
        headers: { Authorization: `Bearer ${p.token}` },
      });
      callers.push(caller);
      await caller.ready();
    });

    await t.step("a second start with the same token: 401 token_used", async (s) => {
      const p = await connect(api, acme.sk, acme.agent_id);
      const first = await TestCaller.connect({
        offerUrl: p.endpoint,
        headers: { Authorization: `Bearer ${p.token}` },
      });
      callers.push(first);
      await first.ready();
      const again = await TestCaller.connect({
        offerUrl: p.endpoint,
        headers: { Authorization: `Bearer ${p.token}` },
      }).then(() => undefined, (e) => e);
      assert(again instanceof CallerHttpError);
      assertEquals(again.status, 401);
      assertEquals(JSON.parse(again.body).error.code, "token_used");

      await s.step("renegotiation of the same connection is not a reuse", async () => {
        await first.renegotiate();
        const pong = first.sendRtvi("client-message", { t: "still-there" });
        const res = await first.waitForMessage((m) => m.id === pong);
        assertEquals(res.type, "server-response");
      });

      await s.step("restart_pc of the same call is not a reuse", async () => {
        const replacement = await TestCaller.connect({
          offerUrl: p.endpoint,
          headers: { Authorization: `Bearer ${p.token}` },
          restartOf: first.pcId!,
        });
        callers.push(replacement);
        assert(replacement.pcId && replacement.pcId !== first.pcId);
        await replacement.waitOpen();
        const id = replacement.sendRtvi("client-message", { t: "after-restart" });
        const res = await replacement.waitForMessage((m) => m.id === id);
        assertEquals(res.type, "server-response");
        const [row] = await api.db.sql`select status from sessions where id = ${p.session_id}`;
        assertEquals(row.status, "active", "the call went on across the restart");
      });

      await first.hangUp();
      const afterEnd = await TestCaller.connect({
        offerUrl: p.endpoint,
        headers: { Authorization: `Bearer ${p.token}` },
      }).then(() => undefined, (e) => e);
      assert(afterEnd instanceof CallerHttpError);
      assertEquals(afterEnd.status, 401);
    });

    await t.step("CORS on the offer endpoint for POST and PATCH", async () => {
      const p = await connect(api, acme.sk, acme.agent_id);
      const res = await fetch(p.endpoint, {
        method: "OPTIONS",
        headers: {
          origin: "http://127.0.0.1:5173",
          "access-control-request-method": "PATCH",
          "access-control-request-headers": "authorization,content-type",
        },
      });
      await res.body?.cancel();
      assertEquals(res.headers.get("access-control-allow-origin"), "http://127.0.0.1:5173");
      assert(res.headers.get("access-control-allow-methods")?.includes("PATCH"));
    });
  } finally {
    for (const c of callers) await c.hangUp();
    for (const w of workers) await w.stop();
    await api.close();
  }
});
