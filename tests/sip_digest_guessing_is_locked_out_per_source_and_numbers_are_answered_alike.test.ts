// Issue 32: 446 wrong passwords a second from one address were all checked, and a known number on
// a digest trunk (401) could be told from an unknown one (404). Now every INVITE that no trunk
// admits is answered as a digest trunk of the default realm would be (401, then 403 for any
// credentials), and an address whose credentials failed 10 times is answered 503 with
// Retry-After, right password or not, while other addresses go on.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { rowCounts } from "./helpers/api_server.ts";
import {
  authorization,
  nonceOf,
  redirectOverUdp,
  requestUri,
} from "./helpers/redirect_over_udp.ts";
import { DIGEST_FAILURES_BURST } from "../api/sip/phone_calls.ts";

/** A response with what differs per request (nonce, tags, branch, Call-ID, number) blanked. */
const shape = (response: string) =>
  response.replace(/nonce="[^"]+"/g, 'nonce="N"').replace(/tag=[^;\r\n]+/g, "tag=T")
    .replace(/branch=[^;\r\n]+/g, "branch=B").replace(/Call-ID: .+/g, "Call-ID: C")
    .replace(/rport=\d+/g, "rport=P").replace(/\+1555\d+/g, "+NUMBER");

Deno.test("an unknown number is answered as a digest trunk's number is", async () => {
  const t = await redirectOverUdp();
  try {
    const before = await rowCounts(t.api.db);
    const known = await t.ask("+15550101", "same1");
    const unknown = await t.ask("+15559999", "same2");
    assertMatch(known, /^SIP\/2\.0 401 /);
    assertEquals(shape(unknown), shape(known));
    // With credentials (a wrong password on our nonce): 403 alike.
    const wrongKnown = await t.ask(
      "+15550101",
      "same3",
      authorization(nonceOf(known), requestUri("+15550101", t.sip.port), "not the password"),
    );
    const wrongUnknown = await t.ask(
      "+15559999",
      "same4",
      authorization(nonceOf(unknown), requestUri("+15559999", t.sip.port), "not the password"),
    );
    assertMatch(wrongKnown, /^SIP\/2\.0 403 /);
    assertEquals(shape(wrongUnknown), shape(wrongKnown));
    assertEquals(await rowCounts(t.api.db), before);
  } finally {
    await t.close();
  }
});

Deno.test("an address guessing passwords is locked out; another address is not", async () => {
  const t = await redirectOverUdp();
  try {
    const uri = requestUri("+15550101", t.sip.port);
    const guesser = await t.sender("127.0.0.3");
    const nonce = nonceOf(await guesser.ask("+15550101", "guess0"));
    const answers: string[] = [];
    for (let i = 1; i <= DIGEST_FAILURES_BURST + 2; i++) {
      answers.push(
        await guesser.ask("+15550101", `guess${i}`, authorization(nonce, uri, `pw${i}`)),
      );
    }
    const statuses = answers.map((a) => Number(a.slice(8, 11)));
    assertEquals(statuses.slice(0, DIGEST_FAILURES_BURST), Array(DIGEST_FAILURES_BURST).fill(403));
    assertEquals(statuses.slice(DIGEST_FAILURES_BURST), [503, 503]);
    assertMatch(answers.at(-1)!, /Retry-After: \d+/);
    const before = await rowCounts(t.api.db);
    // Locked out: even the right password is not checked.
    const right = await guesser.ask("+15550101", "guessright", authorization(nonce, uri));
    assertMatch(right, /^SIP\/2\.0 503 /);
    assertEquals(await rowCounts(t.api.db), before);

    // Another address with the right password is admitted.
    const other = await t.sender("127.0.0.4");
    const fresh = nonceOf(await other.ask("+15550101", "other1"));
    assertMatch(
      await other.ask("+15550101", "other2", authorization(fresh, uri)),
      /^SIP\/2\.0 302 /,
    );
    assert((await rowCounts(t.api.db)).sessions === before.sessions + 1);
  } finally {
    await t.close();
  }
});
