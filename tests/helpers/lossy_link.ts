// Loss on a werift peer connection's own sockets, in userspace: every packet the connection sends
// or receives (STUN, DTLS/SCTP, RTP/RTCP) passes a filter that drops some. Equivalent to a lossy
// link between the two ends, with nothing to re-address (ICE candidates stay as they are), so a
// test gets the same loss whoever the other end is. Random loss is seeded, so a run repeats.
import type { RTCPeerConnection } from "werift";

export type PacketKind = "stun" | "dtls" | "rtp" | "other";
export type Direction = "in" | "out";

/** The kind of a packet on a WebRTC 5-tuple, by its first byte (RFC 7983 §7). */
export function packetKind(data: Uint8Array): PacketKind {
  const b = data[0];
  if (b <= 3) return "stun";
  if (b >= 20 && b <= 63) return "dtls";
  if (b >= 128 && b <= 191) return "rtp";
  return "other";
}

interface UdpTransportLike {
  send: (data: Uint8Array, ...rest: unknown[]) => Promise<void>;
  onData: (data: Uint8Array, ...rest: unknown[]) => void;
}

export interface LinkCounts {
  passed: Record<Direction, number>;
  dropped: Record<Direction, number>;
}

export class LossyLink {
  /** Chance (0..1) each packet is dropped, per direction. */
  loss: Record<Direction, number> = { in: 0, out: 0 };
  readonly counts: LinkCounts = { passed: { in: 0, out: 0 }, dropped: { in: 0, out: 0 } };
  #rule: { direction: Direction; kind: PacketKind; until: number } | undefined;
  #seed: number;
  #every:
    | { direction: Direction; kind: PacketKind; n: number; burst: number; seen: number }
    | undefined;

  constructor(seed = 1) {
    this.#seed = seed >>> 0 || 1;
  }

  /** Drops every packet of `kind` going `direction` for the next `ms` (an outage of one kind). */
  dropFor(ms: number, kind: PacketKind, direction: Direction): void {
    this.#rule = { direction, kind, until: performance.now() + ms };
  }

  /**
   * Drops every `n`th packet of `kind` going `direction` (the nth, 2nth, ...), and the
   * `burst - 1` after each: loss on a script.
   */
  dropEvery(n: number, kind: PacketKind, direction: Direction, burst = 1): void {
    this.#every = { direction, kind, n, burst, seen: 0 };
  }

  /** Both directions at `rate` (0..1). */
  setLoss(rate: number): void {
    this.loss = { in: rate, out: rate };
  }

  /** Puts the link under `pc`'s ICE sockets (call once its ICE is connected). */
  attach(pc: RTCPeerConnection): void {
    let sockets = 0;
    for (const ice of pc.iceTransports) {
      // werift keeps these private; the sockets under ICE carry every packet of the connection.
      const protocols =
        (ice.connection as unknown as { protocols: { transport: UdpTransportLike }[] })
          .protocols;
      for (const { transport } of protocols) {
        const send = transport.send.bind(transport);
        transport.send = (data, ...rest) =>
          this.#pass(data, "out") ? send(data, ...rest) : Promise.resolve();
        const deliver = transport.onData;
        transport.onData = (data, ...rest) => {
          if (this.#pass(data, "in")) deliver(data, ...rest);
        };
        sockets++;
      }
    }
    if (sockets === 0) throw new Error("no ICE socket to put the lossy link under");
  }

  #pass(data: Uint8Array, direction: Direction): boolean {
    const rule = this.#rule;
    if (
      rule && performance.now() < rule.until && rule.direction === direction &&
      packetKind(data) === rule.kind
    ) {
      this.counts.dropped[direction]++;
      return false;
    }
    const every = this.#every;
    if (every && every.direction === direction && packetKind(data) === every.kind) {
      if (++every.seen % every.n < every.burst && every.seen >= every.n) {
        this.counts.dropped[direction]++;
        return false;
      }
    }
    if (this.loss[direction] > 0 && this.#random() < this.loss[direction]) {
      this.counts.dropped[direction]++;
      return false;
    }
    this.counts.passed[direction]++;
    return true;
  }

  /** mulberry32: small, seeded, good enough to spread drops. */
  #random(): number {
    let t = (this.#seed = (this.#seed + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
}
