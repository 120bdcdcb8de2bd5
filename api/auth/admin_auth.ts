// The admin token as one middleware on the admin route group (Hono's bearer-auth shape): the
// group's handlers never check it themselves, and a route added to the group is guarded by it.
import type { Context, Hono, MiddlewareHandler } from "hono";
import { kindOfRawKey } from "../../common/key_hash.ts";
import { ApiError } from "../../common/http/errors.ts";
import { bearer, isAdminToken } from "./credentials.ts";

/** Refuses all but the admin token: an API key is 403 (known, not enough), anything else 401. */
export function checkAdmin(c: Context, adminToken: string): void {
  const raw = bearer(c);
  if (isAdminToken(raw, adminToken)) return;
  if (kindOfRawKey(raw)) {
    throw new ApiError(403, "forbidden", "This operation needs the admin token.");
  }
  throw new ApiError(401, "unauthorized", "The admin token is not valid.");
}

export function adminAuth(adminToken: string): MiddlewareHandler {
  return async (c, next) => {
    checkAdmin(c, adminToken);
    await next();
  };
}

/**
 * Mounts `group` on `app` with `auth` in front of each of its routes. The admin routes share
 * /api/v1 with public ones (sessions.connect, capabilities), so `group.use("*", auth)` would
 * become `/api/v1/*` once mounted and guard those too: the guard goes on the group's own method
 * and path pairs instead, which still covers whatever route the group gains.
 */
export function mountGuarded(app: Hono, group: Hono, auth: MiddlewareHandler): void {
  for (const { method, path } of group.routes) app.on(method, path, auth);
  app.route("/", group);
}
