import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { RtpHeader, RtpPacket } from "werift";
import { OPUS_SILENCE_20MS } from "../../wasm/opus.ts";
import { OpusRtpSender } from "./rtp_sender.ts";
import { RecordingSink } from "../../tests/helpers/rtp_sink.ts";

Deno.test("sequence numbers step by one and timestamps by 960, wrapping at 16 and 32 bits", () => {
  const sink = new RecordingSink(0x1234abcd);
  const tx = new OpusRtpSender(sink, { sequenceNumber: 0xfffe, timestamp: 0xffffffff - 959 });
  for (let i = 0; i < 4; i++) tx.send(Uint8Array.of(i, 1, 2));
  const h = sink.packets.map((p) => p.header);
  assert.deepEqual(h.map((x) => x.sequenceNumber), [0xfffe, 0xffff, 0, 1]);
  assert.deepEqual(h.map((x) => x.timestamp), [0xffffffff - 959, 0, 960, 1920]);
  assert.ok(h.every((x) => x.ssrc === 0x1234abcd && x.payloadType === 111));
  assert.deepEqual(h.map((x) => x.marker), [true, false, false, false]);
  assert.equal(tx.sent, 4);
});

Deno.test("the payload is copied so the encoder may reuse its buffer", () => {
  const sink = new RecordingSink(0x1234abcd);
  const tx = new OpusRtpSender(sink);
  const buf = Uint8Array.of(9, 9, 9);
  tx.send(buf);
  buf.fill(0);
  tx.send(buf);
  assert.deepEqual([...sink.packets[0].payload], [9, 9, 9]);
  assert.deepEqual([...sink.packets[1].payload], [0, 0, 0]);
});

Deno.test("a reused header and packet serialise byte for byte as fresh ones per send", () => {
  const sink = new RecordingSink(0x1234abcd);
  const tx = new OpusRtpSender(sink, { sequenceNumber: 0xfffd, timestamp: 123456 });
  const payloads = [Uint8Array.of(1, 2, 3, 4), OPUS_SILENCE_20MS, Uint8Array.of(7)];
  const expected: Uint8Array[] = [];
  let seq = 0xfffd, ts = 123456;
  for (let i = 0; i < 9; i++) {
    const p = payloads[i % 3];
    if (i === 5) {
      tx.skip(2);
      ts += 2 * 960;
    }
    if (p === OPUS_SILENCE_20MS) tx.sendConstant(p);
    else tx.send(p);
    const header = new RtpHeader({
      payloadType: 111,
      sequenceNumber: seq,
      timestamp: ts,
      ssrc: sink.ssrc,
      marker: i === 0 || i === 5,
    });
    expected.push(new RtpPacket(header, Buffer.from(p)).serialize());
    seq = (seq + 1) & 0xffff;
    ts += 960;
  }
  assert.deepEqual(sink.packets.map((p) => [...p.serialize()]), expected.map((b) => [...b]));
});

Deno.test("a constant packet is sent without a copy, and the same buffer every time", () => {
  const sink = new RecordingSink(0x1234abcd);
  const a = new OpusRtpSender(sink), b = new OpusRtpSender(sink);
  a.sendConstant(OPUS_SILENCE_20MS);
  a.sendConstant(OPUS_SILENCE_20MS);
  b.sendConstant(OPUS_SILENCE_20MS);
  const [p0, p1, p2] = sink.packets.map((p) => p.payload);
  assert.equal(p0, p1);
  assert.equal(p0, p2);
  assert.equal(p0.buffer, OPUS_SILENCE_20MS.buffer);
  assert.deepEqual([...p0], [...OPUS_SILENCE_20MS]);
});

Deno.test("skip() moves the timestamp over unsent frames and marks the next packet", () => {
  const sink = new RecordingSink(0x1234abcd);
  const tx = new OpusRtpSender(sink, { sequenceNumber: 10, timestamp: 1000 });
  tx.send(Uint8Array.of(1));
  tx.skip(5);
  tx.send(Uint8Array.of(2));
  const [a, b] = sink.packets.map((p) => p.header);
  assert.equal(b.sequenceNumber, a.sequenceNumber + 1);
  assert.equal(b.timestamp - a.timestamp, 6 * 960);
  assert.equal(b.marker, true);
});

Deno.test("a failing send is counted, not thrown", async () => {
  const tx = new OpusRtpSender({ ssrc: 1, sendRtp: () => Promise.reject(new Error("dtls")) });
  tx.send(Uint8Array.of(1));
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(tx.errors, 1);
});
