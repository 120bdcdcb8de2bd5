// An RTP sink for tests of our senders: it keeps what werift's RTCRtpSender keeps, a clone of
// each packet taken before its first await (sharing the payload), so a test sees what went out.
import type { RtpPacket } from "werift";
import type { RtpSink } from "../../media/rtc/rtp_sender.ts";

export class RecordingSink implements RtpSink {
  packets: RtpPacket[] = [];
  constructor(readonly ssrc = 42) {}
  sendRtp(packet: RtpPacket): Promise<void> {
    this.packets.push(packet.clone());
    return Promise.resolve();
  }
  /** Resolves once at least `n` packets went out (checked every 20 ms). */
  async received(n: number): Promise<void> {
    while (this.packets.length < n) await new Promise((r) => setTimeout(r, 20));
  }
}
