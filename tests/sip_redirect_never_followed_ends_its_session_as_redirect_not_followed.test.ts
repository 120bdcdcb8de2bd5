// A trunk gets the redirect's 302 (the worker's Contact with a session token), ACKs it and never
// sends the INVITE. Its session must not wait in `created` for TOKEN_TTL_SECONDS: the token in a
// 302 is good for REDIRECT_FOLLOW_SECONDS (a trunk follows within its INVITE transaction, 32 s),
// then the session ends as an unspent web token's does, `expired`, with the reason named
// `redirect_not_followed`, and its slot is given back. SIPp 3.6 is the trunk.
import { assert, assertEquals } from "./helpers/assert.ts";
import { assertSippPassed, runSipp } from "./helpers/sipp.ts";
import { request, sdpOffer, XML_HEAD } from "./helpers/sipp_scenario.ts";
import { startTestApi } from "./helpers/api_server.ts";
import { registerNode } from "../db/nodes.ts";
import { startSipRedirect } from "../api/sip/start.ts";
import { REDIRECT_FOLLOW_SECONDS } from "../api/sip/phone_session.ts";
import { TokenVerifier } from "../common/token.ts";
import { signingJwk } from "../db/signing_key.ts";

const NUMBER = "+15550100";

const redirectedOnly = `${XML_HEAD}<scenario name="302-not-followed">
  <send retrans="500"><![CDATA[${request("INVITE", 1) + sdpOffer([0])}]]></send>
  <recv response="100" optional="true"/>
  <recv response="302"/>
  <send><![CDATA[
      ACK sip:[service]@[remote_ip]:[remote_port] SIP/2.0
      Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch-3]
      From: sipp <sip:+15550111@[local_ip]:[local_port]>;tag=[call_number]
      [last_To:]
      Call-ID: [call_id]
      CSeq: 1 ACK
      Max-Forwards: 70
      Content-Length: 0
]]></send>
  <pause milliseconds="100"/>
</scenario>`;

/** A trunk that takes a 302 and never follows it; `check` sees the redirect's token and session. */
async function redirectNotFollowed(
  env: Record<string, string>,
  check: (
    claims: { sid: string; exp: number; iat: number },
    api: Awaited<ReturnType<typeof startTestApi>>,
  ) => Promise<void>,
) {
  const api = await startTestApi({ RATE_LIMIT_PER_ADDRESS_PER_SECOND: "0", ...env }, {
    node: false,
  });
  const sip = await startSipRedirect(api.deps, { host: "127.0.0.1", port: 0 });
  try {
    const { agent } = (await api.admin("/api/v1/agents.create", {
      tenant: "acme",
      name: "Reception",
      brain_url: "wss://brain.example.test/voice",
    })).body;
    await api.admin("/api/v1/numbers.create", { number: NUMBER, agent_id: agent.agent_id });
    await registerNode(api.db.sql, {
      node_id: "worker-sip",
      offer_base_url: "http://127.0.0.1:9/worker",
      capacity: 10,
      sip_address: "127.0.0.1",
      sip_port: 5099,
    });
    const run = await runSipp(redirectedOnly, sip.port, NUMBER);
    assertSippPassed(run);
    const contact = /^Contact:\s*<[^;]+;session=([A-Za-z0-9_.-]+)>/im.exec(run.messages);
    assert(contact, `no 302 Contact in:\n${run.messages}`);
    const verifier = await TokenVerifier.fromJwk(await signingJwk(api.db, api.settings));
    await check(await verifier.verify(contact[1], "worker-sip"), api);
  } finally {
    await sip.close();
    await api.close();
  }
}

Deno.test("a 302's token lives REDIRECT_FOLLOW_SECONDS though TOKEN_TTL_SECONDS is longer", async () => {
  await redirectNotFollowed({}, async (claims, api) => {
    assertEquals(claims.exp - claims.iat, REDIRECT_FOLLOW_SECONDS);
    const record = (await api.admin("/api/v1/sessions.get", { session_id: claims.sid })).body;
    assertEquals(record.status, "created");
  });
});

// The wait is the token's life: TOKEN_TTL_SECONDS shortens it (the shorter of the two) so the
// test waits seconds, not REDIRECT_FOLLOW_SECONDS.
Deno.test("a 302 no INVITE follows ends its session expired/redirect_not_followed once the token's short life is over", async () => {
  await redirectNotFollowed({ TOKEN_TTL_SECONDS: "3" }, async (claims, api) => {
    assertEquals(claims.exp - claims.iat, 3);
    const get = async () =>
      (await api.admin("/api/v1/sessions.get", { session_id: claims.sid })).body;
    let record = await get();
    for (let i = 0; i < 300 && record.status === "created"; i++) {
      await new Promise((r) => setTimeout(r, 200));
      record = await get();
    }
    assertEquals([record.status, record.end_reason], ["expired", "redirect_not_followed"]);
    const [row] = await api.db.sql<{ holds_slot: boolean; active_calls: number }[]>`
      select s.holds_slot, n.active_calls from sessions s join worker_nodes n on n.id = s.node_id
      where s.id = ${claims.sid}`;
    assertEquals([row.holds_slot, row.active_calls], [false, 0]);
  });
});
