// Issue 32: a stranger spraying valid-looking PCMU at every even port of RTP_PORTS while calls
// are set up must not capture them. Four calls' RtpMedia on a small RTP_PORTS range over real
// sockets; the stranger sends from 127.0.0.2 (another address on loopback) to every port, before
// and during the trunks' media (from 127.0.0.1, the address their SDP named). Each call latches
// on its trunk, the stranger hears nothing and none of its packets becomes caller audio.
import dgram from "node:dgram";
import { assert, assertEquals } from "./helpers/assert.ts";
import { RtpMedia } from "../media/phone/rtp_media.ts";
import { buildRtp } from "../media/phone/rtp_packet.ts";
import type { AnswerChoice } from "../media/sip/sdp.ts";
import { evenPortsFrom } from "../common/port_range.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function socketOn(address: string) {
  const socket = dgram.createSocket("udp4");
  let got = 0;
  socket.on("message", () => got++);
  await new Promise<void>((ok) => socket.bind(0, address, ok));
  return {
    port: socket.address().port,
    get got() {
      return got;
    },
    send: (bytes: Uint8Array, port: number) => socket.send(bytes, port, "127.0.0.1"),
    close: () => new Promise<void>((ok) => socket.close(() => ok())),
  };
}

const choice = (port: number): AnswerChoice => ({
  codec: "PCMU",
  payloadType: 0,
  dtmfPayloadType: 101,
  remoteAddress: "127.0.0.1",
  remotePort: port,
  direction: "sendrecv",
  ptime: 20,
});

/** A loud 20 ms PCMU packet (0x00 is μ-law's largest negative step). */
const loud = (seq: number, ssrc: number) =>
  buildRtp(
    { marker: false, payloadType: 0, sequenceNumber: seq, timestamp: seq * 160, ssrc },
    new Uint8Array(160),
  );
const quiet = (seq: number, ssrc: number) =>
  buildRtp(
    { marker: false, payloadType: 0, sequenceNumber: seq, timestamp: seq * 160, ssrc },
    new Uint8Array(160).fill(0xff),
  );

async function sprayedCalls(symmetric: boolean) {
  const first = 20_000 + 2 * Math.floor(Math.random() * 10_000);
  const ports = { first, last: first + 15 };
  const stranger = await socketOn("127.0.0.2");
  const trunks = await Promise.all([0, 1, 2, 3].map(() => socketOn("127.0.0.1")));
  const calls: RtpMedia[] = [];
  let loudFrames = 0;
  let spraying = true;
  // The spray: every even port of the range, in sequence per port as a careful attacker would.
  const spray = (async () => {
    for (let seq = 0; spraying; seq++) {
      for (const port of evenPortsFrom(ports, () => 0)) stranger.send(loud(seq, 0xbad), port);
      await sleep(4);
    }
  })();
  const pumps: Promise<void>[] = [];
  try {
    for (const trunk of trunks) {
      const media = await RtpMedia.open({ host: "127.0.0.1", ports, symmetric });
      media.onCallerFrame.on((pcm) => {
        let s = 0;
        for (const v of pcm) s += v * v;
        if (Math.sqrt(s / pcm.length) > 3000) loudFrames++;
      });
      media.start(choice(trunk.port), "127.0.0.1");
      calls.push(media);
      await sleep(20); // the spray reaches the new port before its trunk's first packet
      // The trunk's own media: quiet, 20 ms apart, for a second.
      const ssrc = 100 + calls.length;
      pumps.push((async () => {
        for (let seq = 0; seq < 50; seq++) {
          trunk.send(quiet(seq, ssrc), media.port);
          await sleep(20);
        }
      })());
    }
    await Promise.all(pumps);
    spraying = false;
    await spray;
    await sleep(100);
    return {
      calls: calls.map((m) => m.stats()),
      trunks: trunks.map((t) => t.got),
      stranger: stranger.got,
      loudFrames,
    };
  } finally {
    spraying = false;
    for (const m of calls) await m.close();
    for (const t of trunks) await t.close();
    await stranger.close();
  }
}

for (const symmetric of [false, true]) {
  Deno.test(`a stranger spraying every RTP port captures no call${symmetric ? " (RTP_SYMMETRIC=1)" : ""}: each latches on its trunk`, async () => {
    const r = await sprayedCalls(symmetric);
    assertEquals(r.stranger, 0, "the stranger heard the calls");
    assertEquals(r.loudFrames, 0, "the stranger's audio reached a call");
    for (const [i, s] of r.calls.entries()) {
      assertEquals(s.latches, 1, `call ${i} latched ${s.latches} times`);
      assert(s.foreign > 50, `call ${i} saw only ${s.foreign} of the stranger's packets`);
      assert(s.packetsIn >= 45, `call ${i} took ${s.packetsIn} of its trunk's 50 packets`);
      assert(r.trunks[i] > 20, `trunk ${i} got ${r.trunks[i]} packets`);
    }
  });
}
