// The credential in `Authorization: Bearer <credential>`: API keys, the admin token and session
// tokens all travel this way.
import type { Context } from "hono";
import { timingSafeEqual } from "node:crypto";

const BEARER = /^Bearer ([\x21-\x7e]+)$/i;

/** The bearer credential, or undefined when the header is missing or malformed. */
export function bearerToken(c: Context): string | undefined {
  return BEARER.exec(c.req.header("authorization")?.trim() ?? "")?.[1];
}

/** Constant-time comparison of a presented secret with the expected one. */
export function sameSecret(presented: string, expected: string): boolean {
  const a = new TextEncoder().encode(presented), b = new TextEncoder().encode(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
