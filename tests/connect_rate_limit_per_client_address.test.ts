// Publishable-key connects are limited per client address (token bucket per API process): the TCP
// peer, or, behind TRUSTED_PROXIES only, the right-most X-Forwarded-For address that is not a
// trusted proxy. A refusal is 429 rate_limited with Retry-After and writes nothing.
import { assert, assertEquals } from "./helpers/assert.ts";
import {
  makeTenant,
  PAGE_ORIGIN,
  readReply,
  rowCounts,
  startTestApi,
  type TestApi,
} from "./helpers/api_server.ts";
import { createApp } from "../api/app.ts";
import { startApiService } from "../api/service.ts";

const CONNECT = "/api/v1/sessions.connect";
const LIMITS = {
  RATE_LIMIT_PER_ADDRESS_PER_SECOND: "0.01", // nothing refills during the test
  RATE_LIMIT_PER_ADDRESS_BURST: "3",
  PENDING_SESSIONS_PER_KEY: "0",
};

/** A pk_ connect from `from` (a loopback source address), with extra headers. */
async function pkConnect(
  api: TestApi,
  pk: string,
  agentId: string,
  opts: { from?: string; forwardedFor?: string } = {},
) {
  const client = opts.from ? Deno.createHttpClient({ localAddress: opts.from }) : undefined;
  try {
    const headers: Record<string, string> = {
      "content-type": "application/json",
      authorization: `Bearer ${pk}`,
      origin: PAGE_ORIGIN,
    };
    if (opts.forwardedFor !== undefined) headers["x-forwarded-for"] = opts.forwardedFor;
    const res = await fetch(api.url + CONNECT, {
      method: "POST",
      headers,
      body: JSON.stringify({ agent_id: agentId }),
      client,
    });
    return await readReply(res);
  } finally {
    client?.close();
  }
}

function limited(r: Awaited<ReturnType<typeof pkConnect>>) {
  assertEquals([r.status, r.body?.error?.code], [429, "rate_limited"], JSON.stringify(r.body));
  assertEquals(r.body.error.details.limit, "address_rate");
  assert(Number(r.headers.get("retry-after")) >= 1, "Retry-After");
}

Deno.test("pk_ connects are limited per TCP peer; a spoofed X-Forwarded-For is ignored", async () => {
  const api = await startTestApi(LIMITS); // TRUSTED_PROXIES unset: no proxy is believed
  try {
    const acme = await makeTenant(api);
    for (let i = 0; i < 3; i++) {
      assertEquals((await pkConnect(api, acme.pk, acme.agent_id)).status, 200);
    }
    const before = await rowCounts(api.db);
    limited(await pkConnect(api, acme.pk, acme.agent_id));
    // A client cannot buy a fresh bucket by claiming to be forwarded.
    limited(await pkConnect(api, acme.pk, acme.agent_id, { forwardedFor: "203.0.113.9" }));
    limited(
      await pkConnect(api, acme.pk, acme.agent_id, { forwardedFor: "198.51.100.1, 203.0.113.9" }),
    );
    assertEquals(await rowCounts(api.db), before, "refused connects write nothing");

    // Another client (another address) is not affected, nor are secret keys (servers).
    assertEquals((await pkConnect(api, acme.pk, acme.agent_id, { from: "127.0.0.2" })).status, 200);
    assertEquals((await api.post(CONNECT, { agent_id: acme.agent_id }, acme.sk)).status, 200);
  } finally {
    await api.close();
  }
});

Deno.test("behind TRUSTED_PROXIES the client is the right-most untrusted forwarded address", async () => {
  const api = await startTestApi({ ...LIMITS, TRUSTED_PROXIES: "127.0.0.1, 10.0.0.0/8" });
  try {
    const acme = await makeTenant(api);
    const via = (forwardedFor: string) => pkConnect(api, acme.pk, acme.agent_id, { forwardedFor });
    for (let i = 0; i < 3; i++) assertEquals((await via("203.0.113.5")).status, 200);
    limited(await via("203.0.113.5"));
    // What the client wrote itself stands left of what the proxy appended: not believed.
    limited(await via("198.51.100.7, 203.0.113.5"));
    // Another client behind the same proxy has its own bucket.
    assertEquals((await via("203.0.113.6")).status, 200);
    // Through two trusted proxies (10.1.2.3 in front of the one we see).
    for (let i = 0; i < 3; i++) assertEquals((await via("203.0.113.7, 10.1.2.3")).status, 200);
    limited(await via("203.0.113.7"));
    // IPv6 clients are counted by their /64.
    for (let i = 0; i < 3; i++) {
      assertEquals((await via(`2001:db8:1:2::${i + 1}`)).status, 200);
    }
    limited(await via("2001:db8:1:2:ffff::1"));
    assertEquals((await via("2001:db8:1:3::1")).status, 200);
    // A peer that is not a trusted proxy is the client, whatever it forwards.
    for (let i = 0; i < 3; i++) {
      assertEquals(
        (await pkConnect(api, acme.pk, acme.agent_id, {
          from: "127.0.0.3",
          forwardedFor: `198.51.100.${i}`,
        })).status,
        200,
      );
    }
    limited(
      await pkConnect(api, acme.pk, acme.agent_id, { from: "127.0.0.3", forwardedFor: "1.1.1.1" }),
    );
  } finally {
    await api.close();
  }
});

Deno.test("an app called without the server's connection info still limits pk_ connects", async () => {
  const api = await startTestApi(LIMITS);
  const service = await startApiService(api.db, api.settings, { sweepMs: 60_000 });
  try {
    const acme = await makeTenant(api);
    const app = createApp(service.deps);
    const call = async () =>
      readReply(
        await app.request(CONNECT, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            authorization: `Bearer ${acme.pk}`,
            origin: PAGE_ORIGIN,
          },
          body: JSON.stringify({ agent_id: acme.agent_id }),
        }),
      );
    for (let i = 0; i < 3; i++) assertEquals((await call()).status, 200);
    limited(await call());
  } finally {
    await service.close();
    await api.close();
  }
});
