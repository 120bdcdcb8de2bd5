// The worker's passive ICE-TCP candidate is a listening socket anyone can reach. Garbage sent to
// it — random bytes, an RFC 4571 length prefix announcing 64 KiB that never comes, a STUN binding
// request without credentials, connections left half open — must not throw in the worker (an
// uncaught error would end every call of the process) nor stop the call from connecting.
import assert from "node:assert/strict";
import { RTCPeerConnection } from "werift";
import { peerConfig } from "./config.ts";
import { WorkerPeer } from "./peer.ts";
import { keepCandidates, listCandidates } from "./sdp.ts";

const ICE = { iceAddresses: ["127.0.0.1"] };

async function until(cond: () => boolean, ms: number, what: string): Promise<void> {
  const end = performance.now() + ms;
  while (!cond()) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A STUN Binding request (RFC 5389) with no USERNAME or MESSAGE-INTEGRITY, framed for TCP. */
function unauthenticatedBinding(): Uint8Array {
  const stun = new Uint8Array(20);
  const v = new DataView(stun.buffer);
  v.setUint16(0, 0x0001);
  v.setUint16(2, 0);
  v.setUint32(4, 0x2112a442);
  crypto.getRandomValues(stun.subarray(8));
  return Uint8Array.of(0, 20, ...stun);
}

Deno.test("garbage on the ICE-TCP port leaves the peer working", async () => {
  const client = new RTCPeerConnection(peerConfig(ICE));
  client.addTransceiver("audio", { direction: "sendrecv" });
  const dc = client.createDataChannel("chat");
  await client.setLocalDescription(await client.createOffer());
  await until(() => client.iceGatheringState === "complete", 5000, "gathering");
  const offer = keepCandidates(client.localDescription!.sdp, new Set(ICE.iceAddresses));
  const { peer, answer } = await WorkerPeer.answer({ type: "offer", sdp: offer }, ICE);
  const conns: Deno.Conn[] = [];
  try {
    const passive = listCandidates(answer.sdp).find((c) => / tcp .* tcptype passive/.test(c));
    assert.ok(passive, `no passive TCP candidate in the answer:\n${answer.sdp}`);
    const port = Number(passive.split(/\s+/)[5]);
    const junk = [
      crypto.getRandomValues(new Uint8Array(4096)),
      Uint8Array.of(0xff, 0xff, 1, 2, 3), // announces 64 KiB, sends 3 bytes, stays open
      unauthenticatedBinding(),
      Uint8Array.of(0, 0, 0, 0, 0, 0), // empty frames
    ];
    for (let i = 0; i < 12; i++) {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      conns.push(conn);
      await conn.write(junk[i % junk.length]).catch(() => {});
    }
    await new Promise((r) => setTimeout(r, 300));
    let opened = false;
    dc.stateChanged.subscribe((s) => (opened ||= s === "open"));
    await client.setRemoteDescription(answer);
    await until(() => peer.state === "connected" && opened, 10_000, "the call to connect");
  } finally {
    for (const c of conns) {
      try {
        c.close();
      } catch { /* closed by the worker */ }
    }
    await client.close();
    await peer.close();
  }
});
