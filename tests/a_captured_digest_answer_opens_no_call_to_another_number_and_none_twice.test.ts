// Issue 32: an Authorization that got one INVITE its 302 was good, copied, for any number of the
// same trunk and for 5 minutes. Now the digest's uri must name the INVITE's Request-URI (RFC 7616
// section 3.4.6), a nonce is spent with the session it admits (written in the same statement, so
// every API process sees it), and a nonce is good only from the address it was sent to. Each
// replay writes nothing.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { rowCounts } from "./helpers/api_server.ts";
import {
  authorization,
  nonceOf,
  redirectOverUdp,
  requestUri,
} from "./helpers/redirect_over_udp.ts";

Deno.test("a captured digest answer opens no call to another number, and none twice", async () => {
  const t = await redirectOverUdp();
  try {
    const uri = requestUri("+15550101", t.sip.port);
    const nonce = nonceOf(await t.ask("+15550101", "cap1"));
    const captured = authorization(nonce, uri);
    assertMatch(await t.ask("+15550101", "cap2", captured), /^SIP\/2\.0 302 /);
    const before = await rowCounts(t.api.db);

    // The same header in an INVITE for another number of the same trunk.
    assertMatch(
      await t.ask("+15550105", "cap3", captured),
      /^SIP\/2\.0 403 Forbidden \(credentials refused\)/,
    );
    // The same header for the same number again: the nonce is spent; a new one is offered.
    const again = await t.ask("+15550101", "cap4", captured);
    assertMatch(again, /^SIP\/2\.0 401 Unauthorized/);
    assertMatch(again, /stale=true/);
    assert(nonceOf(again) !== nonce);
    assertEquals(await rowCounts(t.api.db), before);

    // The new nonce with the right answer: the next call goes through.
    assertMatch(
      await t.ask("+15550101", "cap5", authorization(nonceOf(again), uri)),
      /^SIP\/2\.0 302 /,
    );
  } finally {
    await t.close();
  }
});

Deno.test("a nonce sent to one address is not good from another", async () => {
  const t = await redirectOverUdp();
  try {
    const uri = requestUri("+15550101", t.sip.port);
    const nonce = nonceOf(await t.ask("+15550101", "addr1"));
    const other = await t.sender("127.0.0.2");
    const before = await rowCounts(t.api.db);
    // Right password, someone else's nonce: challenged again, not admitted.
    const answer = await other.ask("+15550101", "addr2", authorization(nonce, uri));
    assertMatch(answer, /^SIP\/2\.0 401 /);
    assert(!answer.includes("stale=true"));
    assertEquals(await rowCounts(t.api.db), before);
  } finally {
    await t.close();
  }
});
