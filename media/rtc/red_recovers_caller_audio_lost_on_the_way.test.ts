// The worker's answer prefers RED (RFC 2198) and keeps Opus in-band FEC: a caller that offers RED
// (browsers do) sends each Opus frame again inside the next packet, so a frame lost on the way
// still reaches the call. Here the caller's link drops every 4th RTP packet it sends; every frame
// must still arrive at the worker, in order. Before, the answer had Opus alone: a quarter of the
// frames were gone.
import assert from "node:assert/strict";
import { RTCPeerConnection } from "werift";
import { OPUS_FMTP, peerConfig } from "./config.ts";
import { WorkerPeer } from "./peer.ts";
import { OpusRtpSender } from "./rtp_sender.ts";
import { keepCandidates, mediaSections } from "./sdp.ts";
import { LossyLink } from "../../tests/helpers/lossy_link.ts";

const ICE = { iceAddresses: ["127.0.0.1"] };

async function until(cond: () => boolean, ms: number, what: string): Promise<void> {
  const end = performance.now() + ms;
  while (!cond()) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

Deno.test("RED recovers caller audio lost on the way; the answer keeps Opus FEC", async () => {
  const client = new RTCPeerConnection(peerConfig(ICE));
  const audio = client.addTransceiver("audio", { direction: "sendrecv" });
  client.addTransceiver("video", { direction: "sendrecv" });
  client.addTransceiver("video", { direction: "sendonly" });
  client.createDataChannel("chat", { ordered: true });
  await client.setLocalDescription(await client.createOffer());
  await until(() => client.iceGatheringState === "complete", 5000, "gathering");
  const offer = keepCandidates(client.localDescription!.sdp, new Set(ICE.iceAddresses));
  const { peer, answer } = await WorkerPeer.answer({ type: "offer", sdp: offer }, ICE);
  try {
    const [voice] = mediaSections(answer.sdp);
    assert.deepEqual(voice.rtpmap, ["63 red/48000/2", "111 opus/48000/2"], "RED first");
    assert.match(answer.sdp, new RegExp(`a=fmtp:111 ${OPUS_FMTP}`));

    const got: { seq: number; payload: number[] }[] = [];
    peer.onAudioRtp.on((p) => got.push({ seq: p.header.sequenceNumber, payload: [...p.payload] }));
    await client.setRemoteDescription(answer);
    await until(() => peer.state === "connected", 5000, "connected");
    const link = new LossyLink();
    link.attach(client);
    link.dropEvery(4, "rtp", "out");
    const tx = new OpusRtpSender(audio.sender);
    const frames = 40;
    for (let i = 0; i < frames; i++) {
      tx.send(Uint8Array.of(0xf8, 0xff, 0xfe, i));
      await new Promise((r) => setTimeout(r, 20));
    }
    // The last frame's redundant copy would ride in a packet that is never sent.
    await until(() => got.length >= frames - 1, 3000, `${frames - 1} frames`);
    assert.ok(link.counts.dropped.out >= 9, `the link dropped ${link.counts.dropped.out}`);
    const marks = got.map((g) => g.payload[3]);
    assert.deepEqual(marks.slice(0, frames - 1), [...Array(frames - 1).keys()]);
    got.slice(1).forEach((g, i) => assert.equal(g.seq, (got[i].seq + 1) & 0xffff));
  } finally {
    await client.close();
    await peer.close();
  }
});
