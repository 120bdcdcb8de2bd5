// What SIPp's scenarios do not reach, over a raw UDP socket against the redirect server on the
// real API service: right credentials on an expired nonce get a fresh 401 with stale=true (RFC 7616
// section 3.3), a forged nonce a plain 401, and a retransmitted INVITE the same 302 from its
// transaction (RFC 3261 section 17.2.1) without a second session; a number without a trunk takes
// INVITEs from one address at the publishable-key connect rate, then 503 with Retry-After.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { rowCounts } from "./helpers/api_server.ts";
import { nonceSecret } from "../api/sip/start.ts";
import { DigestNonces } from "../api/sip/digest.ts";
import { authorization, redirectOverUdp as setup } from "./helpers/redirect_over_udp.ts";

Deno.test("digest: an expired nonce with the right credentials gets 401 stale=true; a forged one a plain 401", async () => {
  const t = await setup();
  try {
    const uri = "sip:+15550101@127.0.0.1";
    const before = await rowCounts(t.api.db);
    const expired = new DigestNonces(
      nonceSecret(t.api.deps.hashSecret),
      300,
      () => Date.now() - 600_000,
    ).issue("127.0.0.1");
    t.send(t.invite("+15550101", "stale1", authorization(expired, uri)));
    // Each answer is taken by its branch: the 401s are never ACKed here, so under load one is
    // retransmitted (Timer G) before the next INVITE's answer comes.
    const stale = await t.final("stale1");
    assertMatch(stale, /^SIP\/2\.0 401 Unauthorized\r\n/);
    assertMatch(
      stale,
      /WWW-Authenticate: Digest realm="voice", nonce="[^"]+", algorithm=MD5, qop="auth", stale=true/,
    );
    const fresh = /nonce="([^"]+)"/.exec(stale)![1];
    assert(fresh !== expired, "the stale challenge carries a new nonce");

    const forged = new DigestNonces("another secret", 300).issue("127.0.0.1");
    t.send(t.invite("+15550101", "forged1", authorization(forged, uri)));
    const plain = await t.final("forged1");
    assertMatch(plain, /^SIP\/2\.0 401 /);
    assert(!plain.includes("stale=true"), "a nonce not ours is not stale");
    assertEquals(await rowCounts(t.api.db), before);

    // The fresh nonce from the stale challenge, with the same credentials: 302.
    t.send(t.invite("+15550101", "fresh1", authorization(fresh, uri)));
    assertMatch(await t.final("fresh1"), /^SIP\/2\.0 302 Moved Temporarily/);
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

Deno.test("a trunk-less number limits INVITEs per source address: 503 with Retry-After, nothing written", async () => {
  const t = await setup({
    RATE_LIMIT_PER_ADDRESS_PER_SECOND: "0.1",
    RATE_LIMIT_PER_ADDRESS_BURST: "2",
  });
  try {
    const before = await rowCounts(t.api.db);
    const answers: string[] = [];
    for (const branch of ["limit1", "limit2", "limit3"]) {
      t.send(t.invite("+15550100", branch));
      answers.push(await t.final());
    }
    assertMatch(answers[0], /^SIP\/2\.0 302 /);
    assertMatch(answers[1], /^SIP\/2\.0 302 /);
    assertMatch(
      answers[2],
      /^SIP\/2\.0 503 Service Unavailable \(too many calls from this address\)/,
    );
    assertMatch(answers[2], /Retry-After: \d+/);
    assertEquals((await rowCounts(t.api.db)).sessions, before.sessions + 2);
    // A number behind a trunk is the trunk's to limit: its INVITEs are not counted here.
    t.send(t.invite("+15550101", "limit4"));
    assertMatch(await t.final(), /^SIP\/2\.0 401 /);
  } finally {
    await t.close();
  }
});
