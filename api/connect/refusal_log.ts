// Refused connects (401 no or bad credential, 403 a key used from an origin it does not allow or
// for what it may not do) show in the service's terminal, so a developer whose page gets 401 or
// 403 sees why on the server too. A line names the route, the status and code, the client
// address, the Origin and the credential's kind (pk_, sk_, something else) — never the key. A
// key guesser must not be able to flood the log: at most LINES_PER_WINDOW lines a window, the
// rest counted and reported on the next line written.
import type { Context, MiddlewareHandler } from "hono";
import { logger } from "../../common/log.ts";
import type { TrustedProxies } from "../../common/ipaddr.ts";
import { bearerToken } from "../../common/http/bearer.ts";
import { requestAddress } from "../auth/client_address.ts";

const log = logger("connect");

export const LINES_PER_WINDOW = 10;
export const WINDOW_MS = 60_000;

/** What a presented credential is, without any of its characters beyond the public prefix. */
function credentialKind(c: Context): string {
  const token = bearerToken(c);
  if (!token) return "none";
  const prefix = /^(pk|sk|adm)_/.exec(token)?.[0];
  return prefix ?? "other";
}

/** A field from a request header: bounded, so a huge header cannot make a huge line. */
function bounded(value: string | undefined, max = 120): string | undefined {
  return value === undefined || value.length <= max ? value : `${value.slice(0, max)}…`;
}

/** Counts lines per window; `take` says whether one more may be written and how many were not. */
export class LogWindow {
  #start = -Infinity;
  #written = 0;
  #unlogged = 0;

  constructor(readonly lines = LINES_PER_WINDOW, readonly windowMs = WINDOW_MS) {}

  /** undefined: over the budget (counted); else the refusals left out since the last line. */
  take(now = Date.now()): number | undefined {
    if (now - this.#start >= this.windowMs) {
      this.#start = now;
      this.#written = 0;
    }
    if (this.#written >= this.lines) {
      this.#unlogged++;
      return undefined;
    }
    this.#written++;
    const unlogged = this.#unlogged;
    this.#unlogged = 0;
    return unlogged;
  }
}

/** Middleware for the connect routes: logs each 401/403 answer, at most so many a window. */
export function logRefusedConnects(
  trusted: TrustedProxies,
  window = new LogWindow(),
): MiddlewareHandler {
  return async (c, next) => {
    await next();
    const status = c.res.status;
    if (status !== 401 && status !== 403) return;
    const unlogged = window.take();
    if (unlogged === undefined) return;
    const code = (c.error as { code?: string } | undefined)?.code;
    log.warn("connect refused", {
      path: c.req.path,
      status,
      code,
      client: requestAddress(c, trusted),
      origin: bounded(c.req.header("origin")),
      credential: credentialKind(c),
      correlation_id: c.get("correlationId"),
      unlogged_before: unlogged || undefined,
    });
  };
}
