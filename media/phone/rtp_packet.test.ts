import fc from "fast-check";
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { buildRtp, parseRtp, type RtpPacket } from "./rtp_packet.ts";

const header = {
  marker: true,
  payloadType: 8,
  sequenceNumber: 65535,
  timestamp: 0xfffffff0,
  ssrc: 0xdeadbeef,
};

Deno.test("a built packet reads back: header fields at their extremes and the payload", () => {
  const bytes = buildRtp(header, new Uint8Array([1, 2, 3]));
  assertEquals(bytes.length, 15);
  assertEquals(Array.from(bytes.subarray(0, 4)), [0x80, 0x88, 0xff, 0xff]);
  const p = parseRtp(bytes) as RtpPacket;
  assertEquals({ ...p, payload: Array.from(p.payload) }, { ...header, payload: [1, 2, 3] });
});

Deno.test("CSRCs, a header extension and padding are stepped over (RFC 3550 5.1, 5.3.1)", () => {
  const bytes = new Uint8Array([
    0xb2,
    0x00,
    0x00,
    0x07,
    0,
    0,
    0,
    160,
    0,
    0,
    0,
    9, // V=2 P X CC=2, PT 0, seq 7, ts 160, ssrc 9
    0,
    0,
    0,
    1,
    0,
    0,
    0,
    2, // two CSRCs
    0xbe,
    0xde,
    0x00,
    0x01,
    0x10,
    0xaa,
    0,
    0, // a one-word extension
    0x11,
    0x22, // the payload
    0,
    0,
    3, // three bytes of padding, the last one counting them
  ]);
  const p = parseRtp(bytes) as RtpPacket;
  assertEquals([p.sequenceNumber, p.timestamp, p.ssrc, Array.from(p.payload)], [7, 160, 9, [
    0x11,
    0x22,
  ]]);
});

Deno.test("what is not RTP is refused with a reason; RTCP on the RTP port is named", () => {
  assertEquals(parseRtp(new Uint8Array(11)), "shorter than an RTP header");
  assertEquals(parseRtp(new Uint8Array(12)), "not RTP version 2");
  const rr = new Uint8Array(12);
  rr[0] = 0x81;
  rr[1] = 201; // RTCP receiver report
  assertEquals(parseRtp(rr), "rtcp");
  const cc = new Uint8Array(12);
  cc[0] = 0x8f; // 15 CSRCs announced, none there
  assertEquals(parseRtp(cc), "headers longer than the packet");
  const pad = new Uint8Array(13);
  pad[0] = 0xa0;
  pad[12] = 20; // more padding than the packet
  assertEquals(parseRtp(pad), "bad padding");
});

Deno.test("random datagrams are read or refused, never thrown on", () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 80 }), fc.boolean(), (bytes, v2) => {
      if (v2 && bytes.length) bytes[0] = 0x80 | (bytes[0] & 0x3f);
      const p = parseRtp(bytes);
      if (typeof p === "string") return true;
      assert(p.payload.length <= bytes.length - 12);
      return true;
    }),
    { numRuns: 5000 },
  );
});
