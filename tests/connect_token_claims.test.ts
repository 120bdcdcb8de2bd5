// The session token: EdDSA, its claims, its expiry, and the refusals a worker makes with it.
import * as jose from "jose";
import { assert, assertEquals } from "./helpers/assert.ts";
import { makeTenant, startTestApi } from "./helpers/api_server.ts";
import { settingOrCreate } from "../db/service_settings.ts";
import { generateSigningJwk, TokenError, TokenSigner, TokenVerifier } from "../common/token.ts";

const CONNECT = "/api/v1/sessions.connect";

async function rejects(p: Promise<unknown>, reason: string) {
  try {
    await p;
  } catch (err) {
    assert(err instanceof TokenError, String(err));
    assertEquals(err.reason, reason);
    return;
  }
  throw new Error(`expected a ${reason} refusal`);
}

Deno.test("session token claims and expiry", async (t) => {
  const api = await startTestApi({ TOKEN_TTL_SECONDS: "120" });
  const acme = await makeTenant(api);
  const jwk = await settingOrCreate(api.db.sql, "token_signing_key", () => "unused");
  const verifier = await TokenVerifier.fromJwk(jwk);
  const r = await api.post(CONNECT, {
    agent_id: acme.agent_id,
    init: { order: "42" },
    config: { tts: { voice: "VOICE_ARJUN" } },
    display_name: "Order 42",
  }, acme.sk);
  assertEquals(r.status, 200);
  const token = r.body.webrtc_request_params.headers.Authorization.slice("Bearer ".length);

  await t.step("signed with EdDSA and carrying sid, aud, sub, ten, input, exp, jti", async () => {
    assertEquals(jose.decodeProtectedHeader(token).alg, "EdDSA");
    const claims = await verifier.verify(token, "node-test-1");
    assertEquals(claims.sid, r.body.session_id);
    assertEquals(claims.aud, "node-test-1");
    assertEquals(claims.sub, acme.agent_id);
    assertEquals(claims.ten, acme.workspace_id);
    assertEquals(claims.input, {
      init: { order: "42" },
      config: { tts: { voice: "VOICE_ARJUN" } },
      record: null,
      display_name: "Order 42",
      metadata: {},
    });
    assertEquals(claims.exp - claims.iat, 120);
    const [row] = await api.db.sql`select token_id, token_expires_at, agent_input, node_id
      from sessions where id = ${claims.sid}`;
    assertEquals(row.token_id, claims.jti);
    assertEquals(row.token_expires_at.getTime(), claims.exp * 1000);
    assertEquals(row.agent_input, claims.input, "the same normalized input is stored");
    assertEquals(row.node_id, "node-test-1");
  });

  await t.step("another node refuses it as wrong_node", async () => {
    await rejects(verifier.verify(token, "node-other"), "wrong_node");
  });

  await t.step("a tampered or foreign-key token is invalid_token", async () => {
    const [h, p, s] = token.split(".");
    const flipped = s[0] === "A" ? "B" + s.slice(1) : "A" + s.slice(1);
    await rejects(verifier.verify(`${h}.${p}.${flipped}`, "node-test-1"), "invalid_token");
    const other = await TokenVerifier.fromJwk(await generateSigningJwk());
    await rejects(other.verify(token, "node-test-1"), "invalid_token");
  });

  await t.step("an expired token is token_expired", async () => {
    const signer = await TokenSigner.fromJwk(jwk);
    const past = Date.now() - 600_000;
    const { token: old } = await signer.mint(
      { sid: "ses_x", aud: "node-test-1", sub: "ag", ten: "ws", input: {} },
      { jti: "tok_x", expiresAt: new Date(past + 300_000) },
      past,
    );
    await rejects(verifier.verify(old, "node-test-1"), "token_expired");
  });

  await api.close();
});

Deno.test("an unused token's session expires and its node slot is released", async () => {
  const api = await startTestApi({ TOKEN_TTL_SECONDS: "1" });
  const acme = await makeTenant(api);
  const r = await api.post(CONNECT, { agent_id: acme.agent_id }, acme.sk);
  assertEquals(r.status, 200);
  const active = async () =>
    (await api.db.sql`select active_calls from worker_nodes where id = 'node-test-1'`)[0]
      .active_calls;
  assertEquals(await active(), 1);
  let status = "created";
  for (let i = 0; i < 50 && status === "created"; i++) {
    await new Promise((res) => setTimeout(res, 100));
    [{ status }] = await api.db.sql`select status from sessions where id = ${r.body.session_id}`;
  }
  assertEquals(status, "expired");
  assertEquals(await active(), 0);
  await api.close();
});
