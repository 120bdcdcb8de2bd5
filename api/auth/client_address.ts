// The client address of a request, for the per-address limit on publishable-key connects.
// The TCP peer is the client unless it is one of TRUSTED_PROXIES: then X-Forwarded-For is read
// from the right (each proxy appends the address it received the request from), skipping the
// trusted proxies, and the first address that is not one of them is the client. Whatever a
// client writes into X-Forwarded-For itself stands to the left of that, so it is never taken
// unless every proxy on the way is trusted.
import type { Context } from "hono";
import { addressKey, type Cidr, inCidr, type Ip, parseCidr, parseIp } from "./ip.ts";

/** The key for requests whose peer is not known (an app called without Deno.serve's info). */
export const UNKNOWN_ADDRESS = "unknown";

export class TrustedProxies {
  private constructor(private ranges: Cidr[]) {}

  /** From TRUSTED_PROXIES entries (IPs or CIDRs); throws naming the first that is neither. */
  static parse(entries: string[]): TrustedProxies {
    const ranges: Cidr[] = [];
    for (const entry of entries) {
      const cidr = parseCidr(entry);
      if (!cidr) {
        throw new Error(`TRUSTED_PROXIES: "${entry}" is not an IP address or a CIDR range`);
      }
      ranges.push(cidr);
    }
    return new TrustedProxies(ranges);
  }

  get empty(): boolean {
    return this.ranges.length === 0;
  }

  trusts(ip: Ip): boolean {
    return this.ranges.some((r) => inCidr(ip, r));
  }
}

/** The TCP peer's address of a request served by Deno.serve (Hono's `c.env` is its info). */
export function peerAddress(c: Context): string | undefined {
  const info = c.env as { remoteAddr?: Deno.Addr } | undefined;
  const addr = info?.remoteAddr;
  if (addr && (addr.transport === "tcp" || addr.transport === "udp")) return addr.hostname;
  return undefined;
}

/**
 * The client's address key (see addressKey: an IPv4 address, an IPv6 /64) from the peer and the
 * X-Forwarded-For header; UNKNOWN_ADDRESS when the peer is not known.
 */
export function clientAddress(
  peer: string | undefined,
  forwardedFor: string | undefined,
  trusted: TrustedProxies,
): string {
  const peerIp = peer === undefined ? undefined : parseIp(peer);
  if (!peerIp) return peer === undefined ? UNKNOWN_ADDRESS : peer;
  if (trusted.empty || !trusted.trusts(peerIp) || !forwardedFor) return addressKey(peerIp);
  const hops = forwardedFor.split(",").map((h) => h.trim()).filter((h) => h !== "");
  let client = peerIp;
  for (let i = hops.length - 1; i >= 0; i--) {
    const ip = parseIp(hops[i]);
    // A hop that is not an address was written by the client or a broken proxy: the address
    // that handed it to us (the last one seen) is the one to count.
    if (!ip) break;
    client = ip;
    if (!trusted.trusts(ip)) break;
  }
  return addressKey(client);
}

/** The client address key of a request (see clientAddress). */
export function requestAddress(c: Context, trusted: TrustedProxies): string {
  return clientAddress(peerAddress(c), c.req.header("x-forwarded-for"), trusted);
}
