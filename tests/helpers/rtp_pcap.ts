// A pcap file (libpcap format, Ethernet, IPv4, UDP) of RTP packets for SIPp's play_pcap_audio,
// which sends each packet's UDP payload from its media port to the answer's RTP address at the
// capture's own pace: RTP headers (marker bit, sequence, timestamp) go out as written here.
import { buildRtp } from "../../media/phone/rtp_packet.ts";

export interface PcapRtp {
  /** When it is sent, ms from the first packet. */
  atMs: number;
  payloadType: number;
  sequenceNumber: number;
  timestamp: number;
  marker: boolean;
  payload: Uint8Array;
}

const SSRC = 0x4b455953;

export function rtpPcap(packets: PcapRtp[]): Uint8Array {
  const records: Uint8Array[] = [];
  const global = new DataView(new ArrayBuffer(24));
  global.setUint32(0, 0xa1b2c3d4, true);
  global.setUint16(4, 2, true);
  global.setUint16(6, 4, true);
  global.setUint32(16, 65535, true);
  global.setUint32(20, 1, true); // Ethernet
  records.push(new Uint8Array(global.buffer));
  for (const p of packets) {
    const rtp = buildRtp({ ...p, ssrc: SSRC }, p.payload);
    const udpLength = 8 + rtp.length, ipLength = 20 + udpLength, frame = 14 + ipLength;
    const b = new DataView(new ArrayBuffer(16 + frame));
    const micros = Math.round(p.atMs * 1000);
    b.setUint32(0, Math.floor(micros / 1e6), true);
    b.setUint32(4, micros % 1e6, true);
    b.setUint32(8, frame, true);
    b.setUint32(12, frame, true);
    b.setUint16(16 + 12, 0x0800); // IPv4
    const ip = 16 + 14;
    b.setUint8(ip, 0x45);
    b.setUint16(ip + 2, ipLength);
    b.setUint8(ip + 8, 64);
    b.setUint8(ip + 9, 17); // UDP
    b.setUint32(ip + 12, 0x7f000001);
    b.setUint32(ip + 16, 0x7f000001);
    let sum = 0;
    for (let i = 0; i < 20; i += 2) sum += b.getUint16(ip + i);
    while (sum > 0xffff) sum = (sum & 0xffff) + (sum >> 16);
    b.setUint16(ip + 10, ~sum & 0xffff);
    const udp = ip + 20;
    b.setUint16(udp, 6000);
    b.setUint16(udp + 2, 6000);
    b.setUint16(udp + 4, udpLength);
    const out = new Uint8Array(b.buffer);
    out.set(rtp, udp + 8);
    records.push(out);
  }
  const all = new Uint8Array(records.reduce((n, r) => n + r.length, 0));
  let at = 0;
  for (const r of records) all.set(r, at), (at += r.length);
  return all;
}

const KEYS = "0123456789*#ABCD";

/**
 * A caller's RTP as a pcap: 20 ms μ-law silence packets, and key presses as a carrier shapes
 * them (`marker` on the first event packet or not, the end packet sent `ends` times, 0: lost).
 */
export class PcapCaller {
  readonly packets: PcapRtp[] = [];
  #seq = 2000;
  #ts = 80_000;
  #at = 0;

  silence(ms: number): this {
    for (let i = 0; i < ms / 20; i++) {
      this.#push(0, this.#ts, false, new Uint8Array(160).fill(0xff));
      this.#ts += 160;
    }
    return this;
  }

  press(key: string, ms: number, shape: { marker?: boolean; ends?: number } = {}): this {
    const event = KEYS.indexOf(key), start = this.#ts, n = ms / 20, ends = shape.ends ?? 3;
    const body = (end: boolean, d: number) =>
      new Uint8Array([event, (end ? 0x80 : 0) | 10, d >> 8, d & 255]);
    for (let i = 1; i < n; i++) {
      this.#push(101, start, i === 1 && !!shape.marker, body(false, i * 160));
    }
    // The last update: the end packet, `ends` times; with none, an unended packet of full length.
    if (ends === 0) this.#push(101, start, false, body(false, n * 160));
    for (let e = 0; e < ends; e++) this.#push(101, start, false, body(true, n * 160));
    this.#ts = start + n * 160;
    return this;
  }

  /** One packet every 20 ms (repeated end packets too, as senders space them). */
  #push(pt: number, ts: number, marker: boolean, payload: Uint8Array) {
    this.packets.push({
      atMs: this.#at,
      payloadType: pt,
      sequenceNumber: this.#seq++ & 0xffff,
      timestamp: ts,
      marker,
      payload,
    });
    this.#at += 20;
  }
}
