// Standard Webhooks signing (https://www.standardwebhooks.com, spec/standard-webhooks.md): the
// secret is `whsec_` + base64 of random bytes; the signature is `v1,` + base64 of
// HMAC-SHA256(base64-decoded secret, "<webhook-id>.<webhook-timestamp>.<body>"). Written here on
// WebCrypto (a dozen lines) rather than importing npm:standardwebhooks into the API, whose
// verify side a sender does not need; the tests check every signature with that library.

export const SECRET_PREFIX = "whsec_";
const SECRET_BYTES = 32; // the spec asks for 24 to 64 bytes

function toBase64(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

/** A new endpoint secret: `whsec_` + base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + toBase64(crypto.getRandomValues(new Uint8Array(SECRET_BYTES)));
}

/** The key bytes of a `whsec_...` secret; throws on anything else. */
export function secretBytes(secret: string): Uint8Array<ArrayBuffer> {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error("a webhook secret starts with whsec_");
  return Uint8Array.from(atob(secret.slice(SECRET_PREFIX.length)), (c) => c.charCodeAt(0));
}

/** The three headers of one request; `timestamp` is in whole seconds since the epoch. */
export async function signedHeaders(
  secret: string,
  id: string,
  timestamp: number,
  body: string,
): Promise<Record<string, string>> {
  const key = await crypto.subtle.importKey(
    "raw",
    secretBytes(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = await crypto.subtle.sign(
    "HMAC",
    key,
    new TextEncoder().encode(`${id}.${timestamp}.${body}`),
  );
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": `v1,${toBase64(new Uint8Array(mac))}`,
  };
}
