// Issue 32: one allowlisted source took 100 of 100 slots in 1.5 s with INVITEs it never followed
// to the worker, another trunk got 503 and another workspace's sessions.connect a 500. Now the
// sessions of one trunk, and of one source address, that hold a slot before their call starts are
// capped (PENDING_SESSIONS_PER_TRUNK, PENDING_SESSIONS_PER_SOURCE), counted in the reservation's
// own statement; past the cap an INVITE gets 503 with Retry-After and nothing is written, and the
// rest of the fleet stays for others. A connect that finds the fleet full is a 503, never a 500.
import { assertEquals, assertMatch } from "./helpers/assert.ts";
import { makeTenant, rowCounts } from "./helpers/api_server.ts";
import {
  authorization,
  nonceOf,
  redirectOverUdp,
  requestUri,
} from "./helpers/redirect_over_udp.ts";

Deno.test("a trunk's calls not yet started are capped; its source's other calls and other sources go on", async () => {
  const t = await redirectOverUdp({
    PENDING_SESSIONS_PER_TRUNK: "3",
    RATE_LIMIT_PER_ADDRESS_PER_SECOND: "0",
  });
  try {
    const uri = requestUri("+15550101", t.sip.port);
    const call = async (branch: string) => {
      const nonce = nonceOf(await t.ask("+15550101", `${branch}a`));
      return await t.ask("+15550101", `${branch}b`, authorization(nonce, uri));
    };
    for (const b of ["t1", "t2", "t3"]) assertMatch(await call(b), /^SIP\/2\.0 302 /);
    const before = await rowCounts(t.api.db);
    const refused = await call("t4");
    assertMatch(
      refused,
      /^SIP\/2\.0 503 Service Unavailable \(too many calls not yet started from this trunk\)/,
    );
    assertMatch(refused, /Retry-After: \d+/);
    assertEquals(await rowCounts(t.api.db), before);
    // The number without a trunk, from the same address, is not the trunk's: 302.
    assertMatch(await t.ask("+15550100", "t5"), /^SIP\/2\.0 302 /);
  } finally {
    await t.close();
  }
});

Deno.test("one source address's calls not yet started are capped; another address goes on", async () => {
  const t = await redirectOverUdp({
    PENDING_SESSIONS_PER_SOURCE: "2",
    RATE_LIMIT_PER_ADDRESS_PER_SECOND: "0",
  });
  try {
    assertMatch(await t.ask("+15550100", "s1"), /^SIP\/2\.0 302 /);
    assertMatch(await t.ask("+15550100", "s2"), /^SIP\/2\.0 302 /);
    const before = await rowCounts(t.api.db);
    assertMatch(
      await t.ask("+15550100", "s3"),
      /^SIP\/2\.0 503 Service Unavailable \(too many calls not yet started from this source\)/,
    );
    assertEquals(await rowCounts(t.api.db), before);
    const other = await t.sender("127.0.0.5");
    assertMatch(await other.ask("+15550100", "s4"), /^SIP\/2\.0 302 /);
  } finally {
    await t.close();
  }
});

Deno.test("a connect that finds every node full gets 503 with Retry-After, not 500", async () => {
  // The helper's SIP node has 10 slots: ten INVITEs from ten addresses take them all.
  const t = await redirectOverUdp({ RATE_LIMIT_PER_ADDRESS_PER_SECOND: "0" });
  try {
    for (let i = 0; i < 10; i++) {
      const s = await t.sender(`127.0.1.${i + 1}`);
      assertMatch(await s.ask("+15550100", `full${i}`), /^SIP\/2\.0 302 /);
    }
    const acme = await makeTenant(t.api, "other-workspace");
    const before = await rowCounts(t.api.db);
    const r = await t.api.post("/api/v1/sessions.connect", { agent_id: acme.agent_id }, acme.sk);
    assertEquals([r.status, r.body.error?.code], [503, "workers_full"]);
    assertEquals(r.headers.get("retry-after"), "2");
    assertEquals(await rowCounts(t.api.db), before);
  } finally {
    await t.close();
  }
});
