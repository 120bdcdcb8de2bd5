// Console sign-in: the cookie, the signed-in check and the CSRF defence.
//
// The cookie holds `<expiry seconds>.<HMAC-SHA-256 of "console:<expiry>" keyed by the admin
// token>`: the server checks it in constant time without storing anything, it expires on its
// own, it says nothing about the token, and changing ADMIN_TOKEN signs every console out.
//
// CSRF: the cookie is SameSite=Strict (a cross-site form post does not carry it), and every
// POST must also come from this very origin, since pages on other ports of the same host are
// "same-site" and do get the cookie: Sec-Fetch-Site must say same-origin, or, from a client that
// does not send it, the Origin header must name the host the request was sent to. Anything else
// is refused (403) before the handler runs, sign-in included (login CSRF).
import type { Context, MiddlewareHandler } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { createHmac } from "node:crypto";
import { sameSecret } from "../../common/http/bearer.ts";

export const CONSOLE_COOKIE = "console_session";
export const CONSOLE_PATH = "/console";
/** How long a sign-in lasts. */
export const SESSION_SECONDS = 12 * 3600;

function mac(adminToken: string, expiry: number): string {
  return createHmac("sha256", adminToken).update(`console:${expiry}`).digest("base64url");
}

/** A cookie value valid until `expiry` (Unix seconds). */
export function signSessionCookie(adminToken: string, expiry: number): string {
  return `${expiry}.${mac(adminToken, expiry)}`;
}

/** Whether `value` is a cookie this admin token signed and that has not expired. */
export function verifySessionCookie(
  value: string | undefined,
  adminToken: string,
  nowSeconds = Date.now() / 1000,
): boolean {
  const m = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(value ?? "");
  if (!m) return false;
  const expiry = Number(m[1]);
  // Compare first, then check the expiry, so a wrong MAC and an old one cost the same.
  const good = sameSecret(m[2], mac(adminToken, expiry));
  return good && expiry > nowSeconds;
}

const secure = (c: Context) =>
  new URL(c.req.url).protocol === "https:" || c.req.header("x-forwarded-proto") === "https";

export function startConsoleSession(c: Context, adminToken: string): void {
  const expiry = Math.floor(Date.now() / 1000) + SESSION_SECONDS;
  setCookie(c, CONSOLE_COOKIE, signSessionCookie(adminToken, expiry), {
    path: CONSOLE_PATH,
    httpOnly: true,
    sameSite: "Strict",
    secure: secure(c),
    maxAge: SESSION_SECONDS,
  });
}

export function endConsoleSession(c: Context): void {
  deleteCookie(c, CONSOLE_COOKIE, { path: CONSOLE_PATH, httpOnly: true, sameSite: "Strict" });
}

export function signedIn(c: Context, adminToken: string): boolean {
  return verifySessionCookie(getCookie(c, CONSOLE_COOKIE), adminToken);
}

/** Where sign-in may send the operator back to: console paths only, never another site. */
export function safeNext(next: string | undefined): string {
  if (
    next && (next === CONSOLE_PATH || next.startsWith(CONSOLE_PATH + "/")) &&
    !next.includes("//") && !next.includes("\\") && !next.startsWith(CONSOLE_PATH + "/sign-")
  ) return next;
  return `${CONSOLE_PATH}/sessions`;
}

/** Every route but sign-in and the script: no valid cookie, go to sign-in (303). */
export function requireSignIn(adminToken: string): MiddlewareHandler {
  return async (c, next) => {
    if (signedIn(c, adminToken)) return await next();
    const url = new URL(c.req.url);
    const back = c.req.method === "GET"
      ? `?next=${encodeURIComponent(url.pathname + url.search)}`
      : "";
    return c.redirect(`${CONSOLE_PATH}/sign-in${back}`, 303);
  };
}

/** Whether a state-changing request comes from a page of this very origin. */
export function sameOriginRequest(c: Context): boolean {
  // Browsers set Sec-Fetch-Site themselves; "same-site" (another port of this host, such as the
  // demo page) carries the SameSite=Strict cookie too, so only "same-origin" passes.
  const site = c.req.header("sec-fetch-site");
  if (site !== undefined) return site === "same-origin";
  const origin = c.req.header("origin");
  const host = c.req.header("host") ?? new URL(c.req.url).host;
  if (origin !== undefined) {
    if (origin === "null") return false;
    try {
      return new URL(origin).host === host;
    } catch {
      return false;
    }
  }
  return false;
}

/** Refuses (403) any non-GET/HEAD request that is not same-origin. */
export const sameOriginPosts: MiddlewareHandler = async (c, next) => {
  if (c.req.method === "GET" || c.req.method === "HEAD" || sameOriginRequest(c)) {
    return await next();
  }
  return c.text("Refused: this form was not sent from the console's own pages.", 403);
};
