// The control plane's SIP redirect server against a real SIP peer, SIPp 3.6, over the real API
// and database: an INVITE for a number gets 302 to the chosen worker with a session token that
// verifies for that worker, or a refusal (401 alike for unknown/disabled numbers, a source not
// allowed and digest trunks, then 403/302 for digest credentials, 503 with Retry-After when no worker can take it) that
// leaves sessions, usage and reservations exactly as they were.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { assertSippPassed, runSipp, type SippRun } from "./helpers/sipp.ts";
import {
  ackOfRefusal,
  NO_BODY,
  request,
  sdpOffer,
  XML_HEAD as HEAD,
} from "./helpers/sipp_scenario.ts";
import { rowCounts, startTestApi, type TestApi } from "./helpers/api_server.ts";
import { registerNode } from "../db/nodes.ts";
import { startSipRedirect } from "../api/sip/start.ts";
import type { SipRedirectServer } from "../api/sip/redirect.ts";
import { TokenVerifier } from "../common/token.ts";
import { signingJwk } from "../db/signing_key.ts";

const PASSWORD = "correct horse battery";

interface Fixture {
  api: TestApi;
  sip: SipRedirectServer;
  agentId: string;
  /** Numbers: open (no trunk), digest trunk, allowlisted trunk, off-list trunk, disabled. */
  open: string;
  digest: string;
  allowed: string;
  elsewhere: string;
  disabled: string;
}

async function admin(api: TestApi, path: string, body: unknown) {
  const r = await api.admin(`/api/v1/${path}`, body);
  if (r.status !== 200) throw new Error(`${path}: ${JSON.stringify(r.body)}`);
  return r.body;
}

async function start(): Promise<Fixture> {
  // The per-address limit on trunk-less numbers is off here: these scenarios send many INVITEs
  // from one address (tests/sip_redirect_answers_*.test.ts checks the limit).
  const api = await startTestApi({ RATE_LIMIT_PER_ADDRESS_PER_SECOND: "0" }, { node: false });
  const { agent } = await admin(api, "agents.create", {
    tenant: "acme",
    name: "Reception",
    brain_url: "wss://brain.example.test/voice",
  });
  const digest = await admin(api, "trunks.create", {
    name: "carrier with credentials",
    auth_username: "acme-trunk",
    auth_password: PASSWORD,
    auth_realm: "voice.example",
  });
  const allowed = await admin(api, "trunks.create", {
    name: "carrier on loopback",
    allowed_sources: ["127.0.0.0/8"],
  });
  const elsewhere = await admin(api, "trunks.create", {
    name: "carrier elsewhere",
    allowed_sources: ["203.0.113.0/24"],
  });
  const numbers = {
    open: "+15550100",
    digest: "+15550101",
    allowed: "+15550102",
    elsewhere: "+15550103",
    disabled: "+15550104",
  };
  const add = (number: string, trunk_id?: string, enabled = true) =>
    admin(api, "numbers.create", { number, agent_id: agent.agent_id, trunk_id, enabled });
  await add(numbers.open);
  await add(numbers.digest, digest.trunk.trunk_id);
  await add(numbers.allowed, allowed.trunk.trunk_id);
  await add(numbers.elsewhere, elsewhere.trunk.trunk_id);
  await add(numbers.disabled, undefined, false);
  const sip = await startSipRedirect(api.deps, { host: "127.0.0.1", port: 0 });
  return { api, sip, agentId: agent.agent_id, ...numbers };
}

async function stop(f: Fixture) {
  await f.sip.close();
  await f.api.close();
}

const sipNode = (f: Fixture, capacity = 10, id = "worker-sip") =>
  registerNode(f.api.db.sql, {
    node_id: id,
    offer_base_url: "http://127.0.0.1:9/worker",
    capacity,
    sip_address: "127.0.0.1",
    sip_port: 5099,
  });

/**
 * SIPp's [authentication] signs `sip:host:port` unless told the URI; a trunk signs the
 * Request-URI (RFC 7616 section 3.4.6), which the redirect server checks.
 */
const authUri = (number: string, port: number) => ["-auth_uri", `${number}@127.0.0.1:${port}`];

/** The trunk's INVITE: PCMU only; `extra` header lines (e.g. [authentication]). */
const invite = (cseq: number, extra = "") => request("INVITE", cseq, { extra }) + sdpOffer([0]);

/** INVITE → (100) → `status`, then the ACK; `check` is extra XML inside the final <recv>. */
const oneInvite = (status: number, check = "", extra = "") =>
  `${HEAD}<scenario name="invite-${status}">
  <send retrans="500"><![CDATA[${invite(1, extra)}]]></send>
  <recv response="100" optional="true"/>
  <recv response="${status}">${check}</recv>
  <send><![CDATA[${ackOfRefusal(1, 3)}]]></send>
  <pause milliseconds="100"/>
</scenario>`;

/** The Contact of the last 302 SIPp received, from its message log. */
function contactOf(run: SippRun): string {
  const found = [...run.messages.matchAll(/^Contact:\s*(.+)$/gim)].map((m) => m[1].trim())
    .filter((c) => c.includes(";session="));
  assert(found.length > 0, `no 302 Contact in:\n${run.messages}`);
  return found.at(-1)!;
}

async function verifiedToken(f: Fixture, contact: string, number: string) {
  const m = /^<sip:(\+\d+)@127\.0\.0\.1:5099;session=([A-Za-z0-9_.-]+)(;transport=tcp)?>$/.exec(
    contact,
  );
  assert(m, `unexpected Contact ${contact}`);
  assertEquals(m[1], number);
  const verifier = await TokenVerifier.fromJwk(await signingJwk(f.api.db, f.api.settings));
  const claims = await verifier.verify(m[2], "worker-sip");
  assertEquals(claims.sub, f.agentId);
  const [row] = await f.api.db.sql<
    { status: string; node_id: string; token_id: string; holds_slot: boolean; metadata: unknown }[]
  >`select status, node_id, token_id, holds_slot, metadata from sessions where id = ${claims.sid}`;
  assertEquals([row.status, row.node_id, row.token_id, row.holds_slot], [
    "created",
    "worker-sip",
    claims.jti,
    true,
  ]);
  assertEquals(row.metadata, { phone_dialled: number, phone_caller: "+15550111" });
  return { claims, transport: m[3] };
}

Deno.test("redirect server: refusals write nothing; a number reached gets 302 to its worker", async (t) => {
  const f = await start();
  try {
    await sipNode(f);
    const port = f.sip.port;

    await t.step("OPTIONS is answered 200 with what the redirect server allows", async () => {
      assertSippPassed(
        await runSipp(
          `${HEAD}<scenario name="options"><send><![CDATA[${
            request("OPTIONS", 1, { caller: "sipp", contact: false }) + NO_BODY
          }]]></send>
  <recv response="200">
    <action><ereg regexp="INVITE, ACK, CANCEL, OPTIONS" search_in="hdr" header="Allow:" check_it="true" assign_to="allow"/></action>
  </recv>
  <Reference variables="allow"/>
</scenario>`,
          port,
          f.open,
        ),
      );
    });

    // Answered alike (docs/security.md "Phone calls"): a challenge in the default realm, as a
    // digest trunk's number gets, so an INVITE without the password learns nothing.
    const challengedInDefaultRealm = async (number: string) => {
      const run = await runSipp(oneInvite(401), port, number);
      assertSippPassed(run);
      assertMatch(run.messages, /WWW-Authenticate: Digest realm="voice", nonce=/);
    };
    await t.step("an unknown number and a disabled one get 401 and write nothing", async () => {
      const before = await rowCounts(f.api.db);
      await challengedInDefaultRealm("+15559999");
      await challengedInDefaultRealm(f.disabled);
      assertEquals(await rowCounts(f.api.db), before);
    });

    await t.step("a source outside the trunk's allowlist gets 401 and writes nothing", async () => {
      const before = await rowCounts(f.api.db);
      await challengedInDefaultRealm(f.elsewhere);
      assertEquals(await rowCounts(f.api.db), before);
    });

    await t.step(
      "digest: no credentials 401 (SHA-256 and MD5 offered), a wrong password 403",
      async () => {
        const before = await rowCounts(f.api.db);
        const run = await runSipp(
          `${HEAD}<scenario name="wrong-password">
  <send retrans="500"><![CDATA[${invite(1)}]]></send>
  <recv response="100" optional="true"/>
  <recv response="401" auth="true">
    <action><ereg regexp="algorithm=SHA-256" search_in="msg" check_it="true" assign_to="sha"/>
            <ereg regexp="algorithm=MD5" search_in="msg" check_it="true" assign_to="md5"/></action>
  </recv>
  <send><![CDATA[${ackOfRefusal(1, 3)}]]></send>
  <send retrans="500"><![CDATA[${invite(2, "\n      [authentication]")}]]></send>
  <recv response="100" optional="true"/>
  <recv response="403"/>
  <send><![CDATA[${ackOfRefusal(2, 3)}]]></send>
  <pause milliseconds="100"/>
  <Reference variables="sha,md5"/>
</scenario>`,
          port,
          f.digest,
          "udp",
          ["-au", "acme-trunk", "-ap", "wrong password here", ...authUri(f.digest, port)],
        );
        assertSippPassed(run);
        assertEquals(await rowCounts(f.api.db), before);
      },
    );

    await t.step("digest: the right credentials after the 401 get 302 to the worker", async () => {
      const before = await rowCounts(f.api.db);
      const run = await runSipp(
        `${HEAD}<scenario name="right-password">
  <send retrans="500"><![CDATA[${invite(1)}]]></send>
  <recv response="100" optional="true"/>
  <recv response="401" auth="true"/>
  <send><![CDATA[${ackOfRefusal(1, 3)}]]></send>
  <send retrans="500"><![CDATA[${invite(2, "\n      [authentication]")}]]></send>
  <recv response="100" optional="true"/>
  <recv response="302"/>
  <send><![CDATA[${ackOfRefusal(2, 3)}]]></send>
  <pause milliseconds="100"/>
</scenario>`,
        port,
        f.digest,
        "udp",
        ["-au", "acme-trunk", "-ap", PASSWORD, ...authUri(f.digest, port)],
      );
      assertSippPassed(run);
      await verifiedToken(f, contactOf(run), f.digest);
      const after = await rowCounts(f.api.db);
      assertEquals([after.sessions, after.usage, after.active], [
        before.sessions + 1,
        before.usage + 1,
        before.active + 1,
      ]);
    });

    await t.step("an allowlisted source gets 302 at once, over UDP and TCP", async () => {
      const udp = await runSipp(oneInvite(302), port, f.allowed);
      assertSippPassed(udp);
      assertEquals((await verifiedToken(f, contactOf(udp), f.allowed)).transport, undefined);
      const tcp = await runSipp(oneInvite(302), port, f.allowed, "tcp");
      assertSippPassed(tcp);
      assertEquals((await verifiedToken(f, contactOf(tcp), f.allowed)).transport, ";transport=tcp");
    });

    await t.step("a number without a trunk is open: 302", async () => {
      const run = await runSipp(oneInvite(302), port, f.open);
      assertSippPassed(run);
      await verifiedToken(f, contactOf(run), f.open);
    });
  } finally {
    await stop(f);
  }
});

Deno.test("redirect server: a full fleet gets 503 with Retry-After and nothing is written", async () => {
  const f = await start();
  try {
    const port = f.sip.port;
    const retryAfter =
      `<action><ereg regexp="^ *[0-9]+$" search_in="hdr" header="Retry-After:" check_it="true" assign_to="wait"/></action>`;
    const full = oneInvite(503, retryAfter).replace(
      "</scenario>",
      `<Reference variables="wait"/></scenario>`,
    );
    // No node at all, then a node without SIP (web calls only): never chosen for a phone call.
    let before = await rowCounts(f.api.db);
    assertSippPassed(await runSipp(full, port, f.open));
    await registerNode(f.api.db.sql, {
      node_id: "worker-web",
      offer_base_url: "http://127.0.0.1:9/web",
      capacity: 10,
    });
    assertSippPassed(await runSipp(full, port, f.open));
    assertEquals(await rowCounts(f.api.db), before);

    // A SIP node with room for one: the first call takes it, the second finds it full.
    await sipNode(f, 1);
    const first = await runSipp(oneInvite(302), port, f.open);
    assertSippPassed(first);
    await verifiedToken(f, contactOf(first), f.open);
    before = await rowCounts(f.api.db);
    assertEquals(before.active, 1);
    assertSippPassed(await runSipp(full, port, f.open));
    assertEquals(await rowCounts(f.api.db), before);

    // Draining: never chosen either.
    await f.api.db.sql`update worker_nodes set draining = true, active_calls = 0`;
    before = await rowCounts(f.api.db);
    assertSippPassed(await runSipp(full, port, f.open));
    assertEquals(await rowCounts(f.api.db), before);
  } finally {
    await stop(f);
  }
});
