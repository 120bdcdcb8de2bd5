// A bound for werift 0.25.2's record of sent packets. Its sender-side bandwidth estimator keeps
// one entry per packet sent (for transport-wide congestion-control feedback) and means to drop
// the older ones, but reads the keys of the wrong object, so nothing is ever dropped: the table
// grows by 50 entries a second per call up to its 65,536 transport sequence numbers (~5 MB per
// call after 22 minutes). Feedback arrives within a few hundred milliseconds, so the last
// SENT_INFOS_KEPT (about 20 s of 20 ms packets) are all the estimator can ever look up.
import type { RTCRtpSender } from "werift";

export const SENT_INFOS_KEPT = 1024;

interface SentInfo {
  wideSeq: number;
}

interface SenderBwe {
  sentInfos: Record<number, SentInfo>;
  rtpPacketSent(info: SentInfo): void;
}

/** Makes `sender` keep only the last SENT_INFOS_KEPT packets' send records. */
export function boundSentInfos(sender: RTCRtpSender): void {
  const bwe = (sender as unknown as { senderBWE?: SenderBwe }).senderBWE;
  if (!bwe || typeof bwe.rtpPacketSent !== "function") return; // another werift: nothing to fix
  bwe.rtpPacketSent = (info: SentInfo) => {
    bwe.sentInfos[info.wideSeq] = info;
    delete bwe.sentInfos[(info.wideSeq - SENT_INFOS_KEPT) & 0xffff];
  };
}
