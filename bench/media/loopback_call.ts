// Loopback call timings and pacer jitter: the test caller against an echoing WorkerPeer.
// Run: deno run -A bench/media/loopback_call.ts [calls] [seconds-of-audio-per-call]
//
// Per call: offer POST -> answer (gathering included), -> chat open (ICE+DTLS+SCTP), -> bot-ready,
// then a tone streamed for the given seconds with the caller's 20 ms pacer; reports the echo
// round trip (send -> echoed packet back, matched by order) and the pacer's lateness.

import { Pacer } from "../../media/audio/pacer.ts";
import { WorkerPeer } from "../../media/rtc/peer.ts";
import { TestCaller } from "../../caller/caller.ts";
import { percentile as pct } from "../harness/stats.ts";
import { setTimeout as sleep } from "node:timers/promises";

const CALLS = Number(Deno.args[0] ?? 5);
const SECONDS = Number(Deno.args[1] ?? 3);
const ICE = { iceAddresses: ["127.0.0.1"] };

const peers: WorkerPeer[] = [];
const ac = new AbortController();
const server = Deno.serve(
  { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen: () => {} },
  async (req) => {
    const body = await req.json();
    if (req.method === "PATCH") {
      const peer = peers.find((p) => p.id === body.pc_id);
      for (const c of body.candidates) await peer?.addIceCandidate(c);
      return Response.json({ status: "success" });
    }
    const { peer, answer } = await WorkerPeer.answer({ type: "offer", sdp: body.sdp }, ICE);
    peers.push(peer);
    peer.onAudioRtp.on((p) => peer.audio.send(p.payload));
    peer.onChatMessage.on((t) => {
      if (t.includes('"client-ready"')) {
        const { id } = JSON.parse(t);
        peer.sendChat(
          JSON.stringify({ label: "rtvi-ai", type: "bot-ready", id, data: { version: "2.1.0" } }),
        );
      }
    });
    return Response.json({ ...answer, pc_id: peer.id });
  },
);
const url = `http://127.0.0.1:${server.addr.port}/api/offer`;

const tone = new Int16Array(48000 * SECONDS);
for (let i = 0; i < tone.length; i++) {
  tone[i] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 48000));
}

const f = (x: number) => x.toFixed(1).padStart(6);

console.log("call  answer  open   ready  | echo rtt p50   p99   | lost");
const allRtt: number[] = [];
for (let c = 0; c < CALLS; c++) {
  const t0 = performance.now();
  const caller = await TestCaller.connect({ offerUrl: url, headers: {} });
  const tAnswer = performance.now();
  await caller.waitOpen();
  const tOpen = performance.now();
  await caller.ready();
  const tReady = performance.now();
  await caller.stream(tone);
  await sleep(200);
  const n = Math.min(caller.sentAt.length, caller.arrivals.length);
  const rtt = Array.from({ length: n }, (_, i) => caller.arrivals[i].at - caller.sentAt[i]);
  allRtt.push(...rtt);
  console.log(
    `${String(c).padStart(4)} ${f(tAnswer - t0)} ${f(tOpen - t0)} ${f(tReady - t0)}  | ` +
      `${f(pct(rtt, 50))} ${f(pct(rtt, 99))}  | ${caller.sentAt.length - caller.arrivals.length}`,
  );
  await caller.hangUp();
}
console.log(
  `all calls echo rtt ms: p50 ${pct(allRtt, 50).toFixed(2)} p99 ${pct(allRtt, 99).toFixed(2)}`,
);

// The pacer alone, idle process: lateness of 500 ticks (10 s).
const pacer = new Pacer(() => {}, { recordJitter: true });
pacer.start();
await sleep(10_000);
pacer.stop();
const s = pacer.stats();
console.log(
  `pacer idle 10 s: ticks ${s.ticks} skipped ${s.skipped} late ms mean ${
    s.meanLateMs.toFixed(2)
  } ` +
    `p50 ${s.p50LateMs.toFixed(2)} p99 ${s.p99LateMs.toFixed(2)} max ${s.maxLateMs.toFixed(2)}`,
);

for (const p of peers) await p.close();
ac.abort();
await server.finished;
