// IP addresses and CIDR ranges, TRUSTED_PROXIES, and which address of a request's peer and
// X-Forwarded-For is the client's (api/auth/client_address.ts reads them off a request). Kept
// here, below settings and routes alike, because both need it: the settings check
// TRUSTED_PROXIES when they load, the connect route counts client addresses. Addresses are kept
// as a family and a bigint; an IPv4-mapped IPv6 address (::ffff:a.b.c.d, as a dual-stack socket
// reports IPv4 peers) is the IPv4 address.

export interface Ip {
  v: 4 | 6;
  bits: bigint;
}

export interface Cidr {
  v: 4 | 6;
  /** The network's bits, host bits cleared. */
  net: bigint;
  prefix: number;
}

const WIDTH = { 4: 32, 6: 128 } as const;

function parseV4(s: string): bigint | undefined {
  const parts = s.split(".");
  if (parts.length !== 4) return undefined;
  let bits = 0n;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || (p.length > 1 && p[0] === "0")) return undefined;
    const n = Number(p);
    if (n > 255) return undefined;
    bits = (bits << 8n) | BigInt(n);
  }
  return bits;
}

function parseGroups(s: string): number[] | undefined {
  if (s === "") return [];
  const out: number[] = [];
  for (const g of s.split(":")) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
    out.push(parseInt(g, 16));
  }
  return out;
}

function parseV6(s: string): bigint | undefined {
  let text = s;
  // An IPv4 tail (::ffff:1.2.3.4, 64:ff9b::1.2.3.4) stands for the last two groups.
  const lastColon = text.lastIndexOf(":");
  if (text.slice(lastColon + 1).includes(".")) {
    const v4 = parseV4(text.slice(lastColon + 1));
    if (v4 === undefined) return undefined;
    text = `${text.slice(0, lastColon + 1)}${(v4 >> 16n).toString(16)}:${
      (v4 & 0xffffn).toString(16)
    }`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  let groups: number[];
  if (halves.length === 2) {
    const head = parseGroups(halves[0]);
    const rest = parseGroups(halves[1]);
    if (!head || !rest) return undefined;
    const missing = 8 - head.length - rest.length;
    if (missing < 1) return undefined;
    groups = [...head, ...Array(missing).fill(0), ...rest];
  } else {
    const all = parseGroups(text);
    if (!all || all.length !== 8) return undefined;
    groups = all;
  }
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(g), 0n);
}

const MAPPED_V4 = 0xffffn << 32n;

/**
 * An address as sockets and proxies write it: `1.2.3.4`, `2001:db8::1`, `[2001:db8::1]`, with an
 * optional port (`1.2.3.4:5678`, `[::1]:80`) or zone (`fe80::1%eth0`); undefined for anything else.
 */
export function parseIp(raw: string): Ip | undefined {
  let s = raw.trim();
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(s);
  if (bracketed) s = bracketed[1];
  else if (/^[\d.]+:\d{1,5}$/.test(s)) s = s.slice(0, s.lastIndexOf(":"));
  const zone = s.indexOf("%");
  if (zone >= 0) s = s.slice(0, zone);
  if (!s.includes(":")) {
    const v4 = parseV4(s);
    return v4 === undefined ? undefined : { v: 4, bits: v4 };
  }
  const v6 = parseV6(s);
  if (v6 === undefined) return undefined;
  if (v6 >> 32n === MAPPED_V4 >> 32n) return { v: 4, bits: v6 & 0xffffffffn };
  return { v: 6, bits: v6 };
}

/** `10.0.0.0/8`, `2001:db8::/32`, or one address (a /32 or /128); undefined when not one. */
export function parseCidr(raw: string): Cidr | undefined {
  const [addr, len, ...more] = raw.trim().split("/");
  if (more.length) return undefined;
  const ip = parseIp(addr);
  // Plain addresses only: no brackets, no port.
  if (!ip || addr.includes("[") || /^[\d.]+:\d+$/.test(addr.trim())) return undefined;
  // A mapped IPv6 range (::ffff:10.0.0.0/104) is the IPv4 range it maps.
  const mapped = ip.v === 4 && addr.includes(":");
  let prefix = WIDTH[ip.v];
  if (len !== undefined) {
    if (!/^\d{1,3}$/.test(len)) return undefined;
    prefix = Number(len) - (mapped ? 96 : 0);
    if (prefix < 0 || prefix > WIDTH[ip.v]) return undefined;
  }
  return { v: ip.v, net: ip.bits & mask(ip.v, prefix), prefix };
}

function mask(v: 4 | 6, prefix: number): bigint {
  const width = BigInt(WIDTH[v]);
  const all = (1n << width) - 1n;
  return all ^ ((1n << (width - BigInt(prefix))) - 1n);
}

export function inCidr(ip: Ip, cidr: Cidr): boolean {
  return ip.v === cidr.v && (ip.bits & mask(ip.v, cidr.prefix)) === cidr.net;
}

/**
 * The rate-limit key of an address: an IPv4 address itself, an IPv6 address's /64 (one
 * subscriber usually holds a whole /64, so counting single IPv6 addresses would let one client
 * take 2^64 buckets).
 */
export function addressKey(ip: Ip): string {
  if (ip.v === 4) {
    const b = ip.bits;
    return [24n, 16n, 8n, 0n].map((s) => String((b >> s) & 0xffn)).join(".");
  }
  const net = ip.bits >> 64n;
  const groups = [48n, 32n, 16n, 0n].map((s) => ((net >> s) & 0xffffn).toString(16));
  return `${groups.join(":")}::/64`;
}

/** The key for requests whose peer is not known (an app called without Deno.serve's info). */
export const UNKNOWN_ADDRESS = "unknown";

/** The proxies whose X-Forwarded-For is believed (TRUSTED_PROXIES). */
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

/**
 * The client's address key (see addressKey: an IPv4 address, an IPv6 /64) from the peer and the
 * X-Forwarded-For header; UNKNOWN_ADDRESS when the peer is not known. The peer is the client
 * unless it is a trusted proxy: then the header is read from the right (each proxy appends the
 * address it received the request from), skipping trusted proxies, and the first address that is
 * not one is the client. What a client writes into the header itself stands to the left of that,
 * so it is never taken unless every proxy on the way is trusted.
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
