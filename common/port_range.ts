// A UDP port range as operators write it ("40000-40999"), for RTP_PORTS: the ports a worker's
// phone calls take their RTP on, so a firewall (or a trunk's allowlist of our media ports) can
// name them instead of the whole ephemeral range.

export interface PortRange {
  first: number;
  last: number;
}

/** Parses "first-last" (both 1024-65535, first ≤ last); throws naming what is wrong. */
export function parsePortRange(text: string, name = "RTP_PORTS"): PortRange {
  const m = /^\s*(\d{1,5})\s*-\s*(\d{1,5})\s*$/.exec(text);
  if (!m) throw new Error(`${name} must be a port range such as 40000-40999, not "${text}"`);
  const first = Number(m[1]), last = Number(m[2]);
  for (const port of [first, last]) {
    if (port < 1024 || port > 65535) {
      throw new Error(`${name}: ${port} is not a port from 1024 to 65535`);
    }
  }
  if (first > last) throw new Error(`${name}: ${first} comes after ${last}`);
  return { first, last };
}

/**
 * The even ports of the range from a random one on, wrapping once: RTP takes even ports and
 * leaves the odd one above for RTCP (RFC 3550 §11); the random start keeps a port just freed
 * (whose late packets may still arrive) from being the next call's.
 */
export function* evenPortsFrom(range: PortRange, random = Math.random): Generator<number> {
  const firstEven = range.first + (range.first % 2);
  const count = Math.floor((range.last - firstEven) / 2) + 1;
  if (count <= 0) return;
  const start = Math.floor(random() * count);
  for (let i = 0; i < count; i++) yield firstEven + 2 * ((start + i) % count);
}
