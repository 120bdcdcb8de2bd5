// Where a laptop run listens and what it announces: one choice, HOST, for every listener others
// reach (the API with the console and demo page, the SIP redirect, the worker's HTTP, WebRTC and
// SIP). Unset, everything is on loopback: nothing on the network can reach a run nobody opened
// up. HOST=0.0.0.0 opens it on every interface and announces this machine's first network address
// (in offer URLs, ICE candidates, SIP Contact and SDP), so a phone or trunk on another host that
// dials it is sent to an address it can reach. The example brain stays on loopback whatever HOST
// says: only this run's own worker dials it.
import { networkInterfaces } from "node:os";

export interface RunAddress {
  /** The address every listener binds. */
  listen: string;
  /** The address others are told to use: offers, ICE, SIP, the printed URLs. */
  announce: string;
}

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

/** This machine's first IPv4 address that is not loopback, if it has one. */
export function firstNetworkAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces())) {
    const found = list?.find((i) => i.family === "IPv4" && !i.internal);
    if (found) return found.address;
  }
  return undefined;
}

/**
 * HOST as a laptop run takes it: unset is loopback; 0.0.0.0 is every interface, announced as
 * `network` (this machine's own address; none: loopback); an IPv4 address is itself. Anything
 * else is refused, since WebRTC here speaks IPv4 only and a name could resolve to several.
 */
export function runAddress(
  host: string | undefined,
  network: string | null = firstNetworkAddress() ?? null,
): RunAddress {
  if (!host) return { listen: "127.0.0.1", announce: "127.0.0.1" };
  if (host === "0.0.0.0") return { listen: host, announce: network ?? "127.0.0.1" };
  if (IPV4.test(host) && host.split(".").every((n) => Number(n) <= 255)) {
    return { listen: host, announce: host };
  }
  throw new Error(
    `HOST must be an IPv4 address (127.0.0.1, the default; 0.0.0.0 for every interface; or one ` +
      `of this machine's addresses), not "${host}"`,
  );
}
