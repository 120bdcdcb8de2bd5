// The TCP peer of a request served by Deno.serve (Hono's `c.env` is its info), for refusal logs.
import type { Context } from "hono";

export function peerOf(c: Context): { address: string; port?: number } {
  const addr = (c.env as { remoteAddr?: Deno.Addr } | undefined)?.remoteAddr;
  if (addr && (addr.transport === "tcp" || addr.transport === "udp")) {
    return { address: addr.hostname, port: addr.port };
  }
  return { address: "unknown" };
}
