import assert from "node:assert/strict";
import { RTCRtpSender } from "werift";
import { boundSentInfos, SENT_INFOS_KEPT } from "./werift_sent_infos_patch.ts";

const sentInfos = (s: RTCRtpSender) =>
  Object.keys((s as unknown as { senderBWE: { sentInfos: object } }).senderBWE.sentInfos);

function send(s: RTCRtpSender, from: number, count: number): void {
  const bwe = (s as unknown as { senderBWE: { rtpPacketSent(i: object): void } }).senderBWE;
  for (let i = 0; i < count; i++) {
    const wideSeq = (from + i) & 0xffff;
    bwe.rtpPacketSent({ wideSeq, size: 100, sendingAtMs: i * 20, sentAtMs: i * 20 });
  }
}

Deno.test("werift's own sender keeps a record of every packet sent (what the patch is for)", () => {
  const s = new RTCRtpSender("audio");
  send(s, 0, 5000);
  assert.equal(sentInfos(s).length, 5000);
});

Deno.test("a patched sender keeps only the last packets' records, across the 16-bit wrap", () => {
  const s = new RTCRtpSender("audio");
  boundSentInfos(s);
  send(s, 0xffff - 2000, 5000);
  const kept = sentInfos(s).map(Number);
  assert.equal(kept.length, SENT_INFOS_KEPT);
  const last = (0xffff - 2000 + 4999) & 0xffff;
  assert.ok(kept.includes(last));
  assert.ok(kept.includes((last - SENT_INFOS_KEPT + 1) & 0xffff));
  assert.ok(!kept.includes((last - SENT_INFOS_KEPT) & 0xffff));
});
