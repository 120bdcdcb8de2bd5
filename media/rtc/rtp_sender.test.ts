import assert from "node:assert/strict";
import type { RtpPacket } from "werift";
import { OpusRtpSender, type RtpSink } from "./rtp_sender.ts";

class RecordingSink implements RtpSink {
  readonly ssrc = 0x1234abcd;
  packets: RtpPacket[] = [];
  sendRtp(packet: RtpPacket): Promise<void> {
    this.packets.push(packet);
    return Promise.resolve();
  }
}

Deno.test("sequence numbers step by one and timestamps by 960, wrapping at 16 and 32 bits", () => {
  const sink = new RecordingSink();
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
  const sink = new RecordingSink();
  const tx = new OpusRtpSender(sink);
  const buf = Uint8Array.of(9, 9, 9);
  tx.send(buf);
  buf.fill(0);
  assert.deepEqual([...sink.packets[0].payload], [9, 9, 9]);
});

Deno.test("skip() moves the timestamp over unsent frames and marks the next packet", () => {
  const sink = new RecordingSink();
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
