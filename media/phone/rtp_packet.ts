/**
 * The RTP fixed header (RFC 3550 section 5.1) as a phone line reads and writes it: version 2,
 * CSRCs and a header extension skipped, padding removed. Written here rather than taken from
 * werift's RtpPacket: that one copies every datagram into a Buffer and builds extension objects,
 * where a G.711 line needs a dozen byte reads, and a datagram that is not RTP (garbage, STUN,
 * RTCP on the RTP port) must be refused without an exception on the receive path.
 */

export interface RtpHeader {
  marker: boolean;
  payloadType: number;
  sequenceNumber: number;
  timestamp: number;
  ssrc: number;
}

export interface RtpPacket extends RtpHeader {
  /** The payload, a view into the datagram (padding removed). */
  payload: Uint8Array;
}

export const RTP_HEADER_BYTES = 12;

/**
 * Reads an RTP packet, or says why it is not one. RTCP sent to the RTP port (payload types
 * 72-76 once the marker bit is folded in, RFC 5761 section 4) is "rtcp", not an error.
 */
export function parseRtp(bytes: Uint8Array): RtpPacket | "rtcp" | string {
  if (bytes.length < RTP_HEADER_BYTES) return "shorter than an RTP header";
  const b0 = bytes[0], b1 = bytes[1];
  if (b0 >> 6 !== 2) return "not RTP version 2";
  const pt = b1 & 0x7f;
  if (pt >= 72 && pt <= 76) return "rtcp";
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let offset = RTP_HEADER_BYTES + 4 * (b0 & 0x0f);
  if (b0 & 0x10) {
    // Header extension: 16-bit profile, 16-bit length in 32-bit words, then the words.
    if (bytes.length < offset + 4) return "header extension cut short";
    offset += 4 + 4 * view.getUint16(offset + 2);
  }
  let end = bytes.length;
  if (b0 & 0x20) {
    const pad = bytes[end - 1];
    if (pad === 0 || end - pad < offset) return "bad padding";
    end -= pad;
  }
  if (offset > end) return "headers longer than the packet";
  return {
    marker: (b1 & 0x80) !== 0,
    payloadType: pt,
    sequenceNumber: view.getUint16(2),
    timestamp: view.getUint32(4),
    ssrc: view.getUint32(8),
    payload: bytes.subarray(offset, end),
  };
}

/** A new datagram: the 12-byte header (no CSRC, no extension, no padding) and the payload. */
export function buildRtp(header: RtpHeader, payload: Uint8Array): Uint8Array {
  const bytes = new Uint8Array(RTP_HEADER_BYTES + payload.length);
  const view = new DataView(bytes.buffer);
  bytes[0] = 0x80;
  bytes[1] = (header.marker ? 0x80 : 0) | (header.payloadType & 0x7f);
  view.setUint16(2, header.sequenceNumber & 0xffff);
  view.setUint32(4, header.timestamp >>> 0);
  view.setUint32(8, header.ssrc >>> 0);
  bytes.set(payload, RTP_HEADER_BYTES);
  return bytes;
}
