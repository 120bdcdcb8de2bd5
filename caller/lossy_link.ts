// Loss and jitter on a werift peer connection's own sockets, in userspace: every packet the
// connection sends or receives (STUN, DTLS/SCTP, RTP/RTCP) passes a filter that drops some and
// may hold the rest back. Equivalent to an impaired link between the two ends, with nothing to
// re-address (ICE candidates stay as they are), so a test or the caller simulator gets the same
// impairment whoever the other end is. Random loss is seeded, so a run repeats.
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
  /**
   * Mean length of a run of lost packets (1: independent losses). Above 1, losses come in bursts
   * (a Gilbert model: a lossy state that drops every packet and lasts `burst` packets on average,
   * entered often enough that the long-run rate is still `loss`).
   */
  burst = 1;
  /** Each packet is held up to this many ms (uniform), so packets also arrive reordered. */
  jitterMs = 0;
  /**
   * Share (0..1) of packets held back `reorderMs` on top of any jitter: on a 20 ms audio stream
   * each such packet arrives behind the next two or three (reordering without jitter).
   */
  reorder = 0;
  reorderMs = 50;
  #bad: Record<Direction, boolean> = { in: false, out: false };
  readonly counts: LinkCounts = { passed: { in: 0, out: 0 }, dropped: { in: 0, out: 0 } };
  #rule: { direction: Direction; kind: PacketKind; until: number } | undefined;
  #random: () => number;
  #every:
    | { direction: Direction; kind: PacketKind; n: number; burst: number; seen: number }
    | undefined;

  constructor(seed = 1) {
    this.#random = mulberry32(seed);
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

  /** Puts the link under `pc`'s ICE sockets (once they exist: after gathering; see onSockets). */
  attach(pc: RTCPeerConnection): void {
    let sockets = 0;
    for (const ice of pc.iceTransports) {
      // werift keeps these private; the sockets under ICE carry every packet of the connection.
      const protocols =
        (ice.connection as unknown as { protocols: { transport: UdpTransportLike }[] })
          .protocols;
      for (const { transport } of protocols) {
        const send = transport.send.bind(transport);
        transport.send = (data, ...rest) => {
          if (!this.passes(data, "out")) return Promise.resolve();
          const delay = this.delay();
          if (delay <= 0) return send(data, ...rest);
          setTimeout(() => send(data, ...rest).catch(() => {}), delay);
          return Promise.resolve();
        };
        const deliver = transport.onData;
        transport.onData = (data, ...rest) => {
          if (!this.passes(data, "in")) return;
          const delay = this.delay();
          if (delay <= 0) deliver(data, ...rest);
          else setTimeout(() => deliver(data, ...rest), delay);
        };
        sockets++;
      }
    }
    if (sockets === 0) throw new Error("no ICE socket to put the lossy link under");
  }

  /** Whether the link lets this packet through (counted; draws the loss). */
  passes(data: Uint8Array, direction: Direction): boolean {
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
    if (this.loss[direction] > 0 && this.#lost(direction)) {
      this.counts.dropped[direction]++;
      return false;
    }
    this.counts.passed[direction]++;
    return true;
  }

  #lost(direction: Direction): boolean {
    const rate = this.loss[direction];
    if (this.burst <= 1) return this.#random() < rate;
    this.#bad[direction] = gilbertStep(this.#bad[direction], rate, this.burst, this.#random());
    return this.#bad[direction];
  }

  /** How long the link holds a packet that passes, in ms (0: sent at once). */
  delay(): number {
    const jitter = this.jitterMs > 0 ? this.#random() * this.jitterMs : 0;
    return this.reorder > 0 && this.#random() < this.reorder ? jitter + this.reorderMs : jitter;
  }
}

/** mulberry32: a small seeded uniform draw in [0, 1), good enough to spread drops. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    let t = (state = (state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * One step of a two-state Gilbert loss model: whether the next packet (or time slot) is in the
 * lossy state, from whether the last one was, the long-run share lost (`rate`, 0..1), the mean
 * length of a run of losses (`burst`) and a uniform draw in [0, 1). The lossy state is left with
 * chance 1/burst and entered with the chance that keeps its stationary share at `rate`.
 */
export function gilbertStep(bad: boolean, rate: number, burst: number, draw: number): boolean {
  const leave = 1 / burst;
  const enter = rate >= 1 ? 1 : (rate * leave) / (1 - rate);
  return bad ? draw >= leave : draw < enter;
}

/** A link's impairment as the caller simulator takes it (`--loss P[,BURST]`, `--jitter MS`). */
export interface Impairment {
  /** Share of packets lost in each direction, 0..1. */
  loss: number;
  /** Mean burst length in packets (1: independent losses). */
  burst: number;
  /** Most a packet is held, in ms, each direction. */
  jitterMs: number;
  /** Share of packets (0..1) held back 50 ms more than the rest, so they arrive reordered. */
  reorder?: number;
  /** Seed of the loss and jitter draws (default 1): the same seed, the same impairment. */
  seed?: number;
}

/** `P[,BURST]`: P percent lost in each direction (0-100), in bursts of BURST packets on average. */
export function parseLoss(text: string): Pick<Impairment, "loss" | "burst"> {
  const [p, b = "1", ...rest] = text.split(",");
  const loss = Number(p), burst = Number(b);
  if (rest.length || p.trim() === "" || !Number.isFinite(loss) || loss < 0 || loss >= 100) {
    throw new Error(`loss must be a percentage from 0 to under 100, then ,BURST; not "${text}"`);
  }
  if (!Number.isFinite(burst) || burst < 1 || burst > 100) {
    throw new Error(`burst must be a mean run of 1 to 100 lost packets, not "${b}"`);
  }
  return { loss: loss / 100, burst };
}

/** A link with `impairment` in both directions, seeded. */
export function impairedLink(impairment: Impairment): LossyLink {
  const link = new LossyLink(impairment.seed ?? 1);
  link.setLoss(impairment.loss);
  link.burst = impairment.burst;
  link.jitterMs = impairment.jitterMs;
  link.reorder = impairment.reorder ?? 0;
  return link;
}
