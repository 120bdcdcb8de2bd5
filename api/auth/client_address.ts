// The client address of a request, for the per-address limit on publishable-key connects: the
// TCP peer as Deno.serve reports it and its X-Forwarded-For, read by common/ipaddr.ts's rules.
import type { Context } from "hono";
import { clientAddress, type TrustedProxies } from "../../common/ipaddr.ts";

/** The TCP peer's address of a request served by Deno.serve (Hono's `c.env` is its info). */
export function peerAddress(c: Context): string | undefined {
  const info = c.env as { remoteAddr?: Deno.Addr } | undefined;
  const addr = info?.remoteAddr;
  if (addr && (addr.transport === "tcp" || addr.transport === "udp")) return addr.hostname;
  return undefined;
}

/** The client address key of a request (see clientAddress). */
export function requestAddress(c: Context, trusted: TrustedProxies): string {
  return clientAddress(peerAddress(c), c.req.header("x-forwarded-for"), trusted);
}
