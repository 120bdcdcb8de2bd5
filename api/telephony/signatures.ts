// The request signatures Twilio and Plivo put on their webhooks, checked with the account's auth
// token. Written here rather than by importing the providers' SDKs (twilio, plivo on npm): each is
// one HMAC over a documented string, and either SDK would pull dozens of packages into the API for
// it. The algorithms are the providers' own, followed exactly, and tested against vectors the
// test computes independently (signatures.test.ts).

const encoder = new TextEncoder();

async function hmacBase64(hash: "SHA-1" | "SHA-256", key: string, message: string) {
  const k = await crypto.subtle.importKey(
    "raw",
    encoder.encode(key),
    { name: "HMAC", hash },
    false,
    ["sign"],
  );
  const mac = await crypto.subtle.sign("HMAC", k, encoder.encode(message));
  return new Uint8Array(mac).toBase64();
}

/** Equal strings, compared in time that does not depend on where they first differ. */
export function sameSecret(a: string, b: string): boolean {
  const x = encoder.encode(a), y = encoder.encode(b);
  let diff = x.length ^ y.length;
  for (let i = 0; i < Math.max(x.length, y.length); i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}

/**
 * Twilio's X-Twilio-Signature ("Webhooks security", https://www.twilio.com/docs/usage/security
 * #validating-requests): base64 HMAC-SHA1, keyed with the auth token, of the full URL Twilio
 * requested followed by every POST parameter sorted by name, each name then its value, with no
 * separators.
 */
export function twilioSignature(
  authToken: string,
  url: string,
  params: [string, string][],
): Promise<string> {
  const sorted = [...params].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return hmacBase64("SHA-1", authToken, url + sorted.map(([k, v]) => k + v).join(""));
}

/**
 * Plivo's X-Plivo-Signature-V3 ("Signature validation V3",
 * https://www.plivo.com/docs/voice/concepts/signature-validation, as its SDKs compute it, e.g.
 * plivo-node lib/utils/v3Security.js): base64 HMAC-SHA256, keyed with the auth token, of
 * `base.nonce`, where for a POST the base is the URL without its query, then `?` and the URL's
 * query parameters sorted `k=v` joined by `&` (a `.` after them when there are POST parameters
 * too), then the POST parameters sorted by name, each name then its value, with no separators;
 * for a GET, the URL with its query sorted. The header may hold several signatures, comma
 * separated (one per active auth token): any may match.
 */
export function plivoSignatureV3(
  authToken: string,
  method: "GET" | "POST",
  url: string,
  params: [string, string][],
  nonce: string,
): Promise<string> {
  const u = new URL(url);
  const byName = (a: [string, string], b: [string, string]) =>
    a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0;
  const query = [...u.searchParams.entries()].sort(byName).map(([k, v]) => `${k}=${v}`).join("&");
  let base = `${u.protocol}//${u.host}${u.pathname}`;
  const post = method === "POST" ? [...params].sort(byName) : [];
  if (query.length > 0 || post.length > 0) base += `?${query}`;
  if (query.length > 0 && post.length > 0) base += ".";
  base += post.map(([k, v]) => k + v).join("");
  return hmacBase64("SHA-256", authToken, `${base}.${nonce}`);
}
