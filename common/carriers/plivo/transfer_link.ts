// The short-lived link Plivo fetches a transfer's XML from. Plivo's "Transfer a call"
// (https://www.plivo.com/docs/voice/api/call/transfer-a-call) takes no XML, only an aleg_url it
// fetches XML from, so the worker asks Plivo to fetch it from the control plane, which must answer
// only for that call, that target and only briefly. The worker signs (session, target, expiry)
// with an HMAC-SHA256 keyed from PLIVO_AUTH_TOKEN (the one secret the API and the workers already
// share for Plivo, and the one Plivo's own request signature uses); the API checks it, the expiry,
// and Plivo's X-Plivo-Signature-V3 on the fetch. The key is derived with a label so the link's MAC
// can never be taken for one of Plivo's own signatures.

const encoder = new TextEncoder();

/** Plivo fetches the URL at once; a minute covers its retries and clock skew, and no more. */
export const TRANSFER_LINK_TTL_S = 60;

/** The path under the API where the transfer XML is served (api/telephony/plivo/transfer.ts). */
export const transferLinkPath = (sessionId: string) =>
  `/api/v1/telephony/plivo/transfer/${encodeURIComponent(sessionId)}`;

async function mac(authToken: string, sessionId: string, target: string, expires: number) {
  const key = await crypto.subtle.importKey(
    "raw",
    encoder.encode(`plivo-transfer-link:${authToken}`),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const message = `${sessionId}\n${target}\n${expires}`;
  const sig = await crypto.subtle.sign("HMAC", key, encoder.encode(message));
  return new Uint8Array(sig).toBase64({ alphabet: "base64url", omitPadding: true });
}

/** The URL Plivo is given as aleg_url: `{publicApiUrl}/api/v1/telephony/plivo/transfer/{session}?...`. */
export async function signTransferLink(o: {
  publicApiUrl: string;
  authToken: string;
  sessionId: string;
  target: string;
  nowMs?: number;
}): Promise<string> {
  const expires = Math.floor((o.nowMs ?? Date.now()) / 1000) + TRANSFER_LINK_TTL_S;
  const sig = await mac(o.authToken, o.sessionId, o.target, expires);
  const query = new URLSearchParams({ target: o.target, expires: String(expires), sig });
  return `${o.publicApiUrl.replace(/\/+$/, "")}${transferLinkPath(o.sessionId)}?${query}`;
}

/** The link's target if its MAC verifies and it has not expired; else why not. */
export async function checkTransferLink(
  authToken: string,
  sessionId: string,
  query: { target?: string; expires?: string; sig?: string },
  nowMs = Date.now(),
): Promise<{ ok: true; target: string } | { ok: false; reason: string }> {
  const { target, expires, sig } = query;
  if (!target || !expires || !sig || !/^[0-9]{1,12}$/.test(expires)) {
    return { ok: false, reason: "The link lacks its target, expiry or signature." };
  }
  const expected = await mac(authToken, sessionId, target, Number(expires));
  if (!sameText(sig, expected)) {
    return { ok: false, reason: "The link's signature does not verify." };
  }
  if (Number(expires) * 1000 < nowMs) return { ok: false, reason: "The link has expired." };
  return { ok: true, target };
}

/** Equal strings, compared in time that does not depend on where they first differ. */
function sameText(a: string, b: string): boolean {
  const x = encoder.encode(a), y = encoder.encode(b);
  let diff = x.length ^ y.length;
  for (let i = 0; i < Math.max(x.length, y.length); i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}
