import { assertEquals } from "../../../tests/helpers/assert.ts";
import { checkTransferLink, signTransferLink, TRANSFER_LINK_TTL_S } from "./transfer_link.ts";

const TOKEN = "pl-token";
const NOW = Date.UTC(2026, 10, 26, 19, 0, 0);

async function queryOf(o: { sessionId?: string; target?: string; nowMs?: number } = {}) {
  const url = new URL(
    await signTransferLink({
      publicApiUrl: "https://voice.example.com/",
      authToken: TOKEN,
      sessionId: o.sessionId ?? "ses_a",
      target: o.target ?? "+14155550123",
      nowMs: o.nowMs ?? NOW,
    }),
  );
  return { url, query: Object.fromEntries(url.searchParams) };
}

Deno.test("a signed transfer link names the session's path and verifies until it expires", async () => {
  const { url, query } = await queryOf();
  assertEquals(
    url.origin + url.pathname,
    "https://voice.example.com/api/v1/telephony/plivo/transfer/ses_a",
  );
  assertEquals(await checkTransferLink(TOKEN, "ses_a", query, NOW), {
    ok: true,
    target: "+14155550123",
  });
  const late = await checkTransferLink(
    TOKEN,
    "ses_a",
    query,
    NOW + (TRANSFER_LINK_TTL_S + 1) * 1000,
  );
  assertEquals(late, { ok: false, reason: "The link has expired." });
});

Deno.test("a transfer link with another target, session, expiry or key does not verify", async () => {
  const { query } = await queryOf();
  const bad = { ok: false as const, reason: "The link's signature does not verify." };
  assertEquals(
    await checkTransferLink(TOKEN, "ses_a", { ...query, target: "+19005550000" }, NOW),
    bad,
  );
  assertEquals(await checkTransferLink(TOKEN, "ses_b", query, NOW), bad);
  assertEquals(
    await checkTransferLink(TOKEN, "ses_a", {
      ...query,
      expires: String(Number(query.expires) + 3600),
    }, NOW),
    bad,
  );
  assertEquals(await checkTransferLink("other-token", "ses_a", query, NOW), bad);
  assertEquals((await checkTransferLink(TOKEN, "ses_a", { target: query.target }, NOW)).ok, false);
});
