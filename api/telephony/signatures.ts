// What the carriers' webhook signatures are made of: an HMAC of a documented string, keyed with the
// account's auth token, and a comparison that takes the same time wherever strings differ. Each
// carrier's own signature is in its folder (twilio/signature.ts, plivo/signature.ts), written
// rather than taken from the carriers' SDKs: each is one HMAC, and either SDK would pull dozens of
// packages into the API for it. The algorithms are the carriers' own, followed exactly, and tested
// against vectors the tests compute independently.

const encoder = new TextEncoder();

export async function hmacBase64(hash: "SHA-1" | "SHA-256", key: string, message: string) {
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
