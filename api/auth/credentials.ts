// Who is calling: an operator with the admin token, or an API key's grant.
import type { Context } from "hono";
import { kindOfRawKey } from "../../common/key_hash.ts";
import { bearerToken, sameSecret } from "../../common/http/bearer.ts";
import type { KeyGrant } from "../../db/keys.ts";
import { ApiError } from "../../common/http/errors.ts";
import type { ApiDeps } from "../context.ts";

export type Caller = { kind: "admin" } | { kind: "key"; grant: KeyGrant };

export function bearer(c: Context): string {
  const token = bearerToken(c);
  if (!token) throw new ApiError(401, "unauthorized", "Send Authorization: Bearer <API key>.");
  return token;
}

const invalidKey = () => new ApiError(401, "invalid_api_key", "The API key is not valid.");

/** The grant of the API key in the Authorization header. */
export async function apiKey(c: Context, deps: ApiDeps): Promise<KeyGrant> {
  const raw = bearer(c);
  const kind = kindOfRawKey(raw);
  if (!kind) throw invalidKey();
  const grant = await deps.keys.resolve(raw);
  if (!grant || grant.kind !== kind) throw invalidKey();
  return grant;
}

/** Whether `presented` is the admin token (constant time). */
export function isAdminToken(presented: string | undefined, adminToken: string): boolean {
  return presented !== undefined && sameSecret(presented, adminToken);
}

/** The admin token or a secret key; publishable keys may only start calls. */
export async function adminOrSecretKey(c: Context, deps: ApiDeps): Promise<Caller> {
  const raw = bearer(c);
  if (isAdminToken(raw, deps.adminToken)) return { kind: "admin" };
  if (!kindOfRawKey(raw)) throw invalidKey();
  const grant = await apiKey(c, deps);
  if (grant.kind !== "secret") {
    throw new ApiError(403, "forbidden", "A publishable key can only start calls.");
  }
  return { kind: "key", grant };
}
