// What SIPp's scenarios do not reach, over a raw UDP socket against the redirect server on the
// real API service: right credentials on an expired nonce get a fresh 401 with stale=true (RFC 7616
// section 3.3), a forged nonce a plain 401, and a retransmitted INVITE the same 302 from its
// transaction (RFC 3261 section 17.2.1) without a second session.
import dgram from "node:dgram";
import { createHash } from "node:crypto";
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { rowCounts, startTestApi } from "./helpers/api_server.ts";
import { registerNode } from "../db/nodes.ts";
import { nonceSecret, startSipRedirect } from "../api/sip/start.ts";
import { DigestNonces } from "../api/sip/digest.ts";

const PASSWORD = "stale nonce password";
const md5 = (s: string) => createHash("md5").update(s).digest("hex");

async function setup() {
  const api = await startTestApi({}, { node: false });
  const admin = async (path: string, body: unknown) =>
    (await api.admin(`/api/v1/${path}`, body)).body;
  const { agent } = await admin("agents.create", {
    tenant: "acme",
    name: "Reception",
    brain_url: "wss://brain.example.test/voice",
  });
  const { trunk } = await admin("trunks.create", {
    name: "digest",
    auth_username: "acme",
    auth_password: PASSWORD,
  });
  await admin("numbers.create", {
    number: "+15550101",
    agent_id: agent.agent_id,
    trunk_id: trunk.trunk_id,
  });
  const open = await admin("numbers.create", { number: "+15550100", agent_id: agent.agent_id });
  assert(open.phone_number);
  await registerNode(api.db.sql, {
    node_id: "worker-sip",
    offer_base_url: "http://127.0.0.1:9/",
    capacity: 10,
    sip_address: "127.0.0.1",
    sip_port: 5099,
  });
  const sip = await startSipRedirect(api.deps, { host: "127.0.0.1", port: 0 });
  const socket = dgram.createSocket("udp4");
  await new Promise<void>((ok) => socket.bind(0, "127.0.0.1", ok));
  const inbox: string[] = [];
  socket.on("message", (m) => inbox.push(m.toString()));
  const send = (text: string) => socket.send(text, sip.port, "127.0.0.1");
  /** The next response with a status >= 200, within 3 s. */
  const final = async () => {
    for (let i = 0; i < 300; i++) {
      const at = inbox.findIndex((m) => /^SIP\/2\.0 [2-6]\d\d /.test(m));
      if (at >= 0) return inbox.splice(0, at + 1).at(-1)!;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`no final response; got ${inbox.join("\n---\n")}`);
  };
  const invite = (number: string, branch: string, extra = "") =>
    [
      `INVITE sip:${number}@127.0.0.1:${sip.port} SIP/2.0`,
      `Via: SIP/2.0/UDP 127.0.0.1:${socket.address().port};branch=z9hG4bK${branch};rport`,
      `From: <sip:+15550111@127.0.0.1>;tag=t${branch}`,
      `To: <sip:${number}@127.0.0.1>`,
      `Call-ID: ${branch}@test`,
      "CSeq: 1 INVITE",
      "Max-Forwards: 70",
      ...(extra ? [extra] : []),
      "Content-Length: 0",
      "",
      "",
    ].join("\r\n");
  return {
    api,
    send,
    final,
    invite,
    close: async () => {
      socket.close();
      await sip.close();
      await api.close();
    },
  };
}

function authorization(nonce: string, uri: string): string {
  const ha1 = md5(`acme:voice:${PASSWORD}`);
  const ha2 = md5(`INVITE:${uri}`);
  const response = md5(`${ha1}:${nonce}:00000001:c0ffee:auth:${ha2}`);
  return `Authorization: Digest username="acme", realm="voice", nonce="${nonce}", uri="${uri}", ` +
    `response="${response}", algorithm=MD5, qop=auth, nc=00000001, cnonce="c0ffee"`;
}

Deno.test("digest: an expired nonce with the right credentials gets 401 stale=true; a forged one a plain 401", async () => {
  const t = await setup();
  try {
    const uri = "sip:+15550101@127.0.0.1";
    const before = await rowCounts(t.api.db);
    const expired = new DigestNonces(
      nonceSecret(t.api.deps.hashSecret),
      300,
      () => Date.now() - 600_000,
    ).issue();
    t.send(t.invite("+15550101", "stale1", authorization(expired, uri)));
    const stale = await t.final();
    assertMatch(stale, /^SIP\/2\.0 401 /);
    assertMatch(
      stale,
      /WWW-Authenticate: Digest realm="voice", nonce="[^"]+", algorithm=MD5, qop="auth", stale=true/,
    );
    const fresh = /nonce="([^"]+)"/.exec(stale)![1];
    assert(fresh !== expired, "the stale challenge carries a new nonce");

    const forged = new DigestNonces("another secret", 300).issue();
    t.send(t.invite("+15550101", "forged1", authorization(forged, uri)));
    const plain = await t.final();
    assertMatch(plain, /^SIP\/2\.0 401 /);
    assert(!plain.includes("stale=true"), "a nonce not ours is not stale");
    assertEquals(await rowCounts(t.api.db), before);

    // The fresh nonce from the stale challenge, with the same credentials: 302.
    t.send(t.invite("+15550101", "fresh1", authorization(fresh, uri)));
    assertMatch(await t.final(), /^SIP\/2\.0 302 Moved Temporarily/);
    assertEquals((await rowCounts(t.api.db)).sessions, before.sessions + 1);
  } finally {
    await t.close();
  }
});

Deno.test("a retransmitted INVITE gets the same 302 from its transaction and makes no second session", async () => {
  const t = await setup();
  try {
    const before = await rowCounts(t.api.db);
    const request = t.invite("+15550100", "again1");
    t.send(request);
    const first = await t.final();
    assertMatch(first, /^SIP\/2\.0 302 /);
    t.send(request);
    const second = await t.final();
    assertEquals(second, first, "the transaction answers the repeat from memory");
    const after = await rowCounts(t.api.db);
    assertEquals([after.sessions, after.active], [before.sessions + 1, before.active + 1]);
    assertMatch(first, /Via: SIP\/2\.0\/UDP 127\.0\.0\.1:\d+;branch=z9hG4bKagain1;rport=\d+/);
  } finally {
    await t.close();
  }
});
