// API keys are stored only as HMAC-SHA-256 under a server secret, so a leaked table is useless
// without the secret. Synchronous node:crypto keeps the connect hot path free of extra awaits.
import { createHmac } from "node:crypto";
import { randomBase62 } from "./ids.ts";

export type KeyKind = "secret" | "publishable";

export function hashKey(secret: string, rawKey: string): Uint8Array {
  return createHmac("sha256", secret).update(rawKey).digest();
}

export function newRawKey(kind: KeyKind): string {
  return `${kind === "secret" ? "sk" : "pk"}_${randomBase62(32)}`;
}

/** What may be shown again after creation: the kind prefix and a few characters. */
export function keyPrefix(rawKey: string): string {
  return rawKey.slice(0, 9);
}

export function kindOfRawKey(rawKey: string): KeyKind | undefined {
  if (rawKey.startsWith("sk_")) return "secret";
  if (rawKey.startsWith("pk_")) return "publishable";
  return undefined;
}
