import assert from "node:assert/strict";
import { type PeerState, WorkerPeer } from "../media/rtc/peer.ts";
import { listCandidates } from "../media/rtc/sdp.ts";
import { CallerHttpError, TestCaller } from "./caller.ts";
import { readWav, rms, to48k } from "./wav.ts";

const ICE = { iceAddresses: ["127.0.0.1"] };
const TOKEN = "test-session-token";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Minimal offer endpoint around WorkerPeer that echoes the caller's audio RTP back. */
function echoServer() {
  const peers = new Map<string, WorkerPeer>();
  const offers: Record<string, unknown>[] = [];
  const patches: Record<string, unknown>[] = [];
  const chat: string[] = [];
  const states: PeerState[] = [];
  let chatClosed = 0;
  const ac = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen: () => {} },
    async (req) => {
      if (req.headers.get("authorization") !== `Bearer ${TOKEN}`) {
        return Response.json({ error: { code: "unauthorized" } }, { status: 401 });
      }
      const body = await req.json();
      if (req.method === "POST") {
        offers.push(body);
        const { peer, answer } = await WorkerPeer.answer({ type: body.type, sdp: body.sdp }, ICE);
        peers.set(peer.id, peer);
        peer.onState.on((s) => states.push(s));
        peer.onAudioRtp.on((p) => peer.audio.send(p.payload));
        peer.onChatClose.on(() => chatClosed++);
        peer.onChatMessage.on((text) => {
          chat.push(text);
          if (text.startsWith("ping")) return;
          const msg = JSON.parse(text);
          if (msg.label === "rtvi-ai" && msg.type === "client-ready") {
            peer.sendChat(JSON.stringify({
              label: "rtvi-ai",
              type: "bot-ready",
              id: msg.id,
              data: { version: "2.1.0", about: { library: "echo-test" } },
            }));
          }
        });
        return Response.json({ ...answer, pc_id: peer.id });
      }
      if (req.method === "PATCH") {
        patches.push(body);
        const peer = peers.get(body.pc_id);
        if (!peer) return Response.json({ error: "unknown pc_id" }, { status: 404 });
        for (const c of body.candidates) await peer.addIceCandidate(c);
        return Response.json({ status: "success" });
      }
      return new Response(null, { status: 405 });
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}/api/offer`,
    peers,
    offers,
    patches,
    chat,
    states,
    chatClosed: () => chatClosed,
    async close() {
      for (const p of peers.values()) await p.close();
      ac.abort();
      await server.finished;
    },
  };
}

async function run(cmd: string, args: string[]): Promise<void> {
  const out = await new Deno.Command(cmd, { args, stdout: "null", stderr: "piped" }).output();
  if (!out.success) throw new Error(`${cmd} failed: ${new TextDecoder().decode(out.stderr)}`);
}

/** espeak-ng speech (22.05 kHz) and its sox conversion to 48 kHz mono 16-bit. */
async function speechWavs(): Promise<{ dir: string; wav22: string; wav48: string }> {
  const dir = await Deno.makeTempDir({ prefix: "caller-test-" });
  const wav22 = `${dir}/speech22.wav`, wav48 = `${dir}/speech48.wav`;
  await run("espeak-ng", [
    "-v",
    "en-us",
    "-w",
    wav22,
    "Hello, this is the test caller. Can you hear me?",
  ]);
  await run("sox", ["-D", wav22, "-r", "48000", "-c", "1", "-b", "16", wav48]);
  return { dir, wav22, wav48 };
}

/** RMS of each 20 ms frame. */
function envelope(pcm: Int16Array): number[] {
  const out: number[] = [];
  for (let i = 0; i + 960 <= pcm.length; i += 960) out.push(rms(pcm, i, i + 960));
  return out;
}

/** Best Pearson correlation of two envelopes over lags 0..maxLag (b delayed relative to a). */
function bestCorrelation(a: number[], b: number[], maxLag = 15): { r: number; lag: number } {
  let best = { r: -1, lag: 0 };
  for (let lag = 0; lag <= maxLag; lag++) {
    const n = Math.min(a.length, b.length - lag);
    if (n < 10) break;
    const x = a.slice(0, n), y = b.slice(lag, lag + n);
    const mx = x.reduce((s, v) => s + v, 0) / n, my = y.reduce((s, v) => s + v, 0) / n;
    let sxy = 0, sxx = 0, syy = 0;
    for (let i = 0; i < n; i++) {
      sxy += (x[i] - mx) * (y[i] - my);
      sxx += (x[i] - mx) ** 2;
      syy += (y[i] - my) ** 2;
    }
    const r = sxy / Math.sqrt(sxx * syy);
    if (r > best.r) best = { r, lag };
  }
  return best;
}

Deno.test("the caller's speech comes back through an echoing WorkerPeer with its energy and timing", async () => {
  const { dir, wav48 } = await speechWavs();
  const server = echoServer();
  const caller = await TestCaller.connect({
    offerUrl: server.url,
    headers: { Authorization: `Bearer ${TOKEN}` },
    requestData: { agent: "echo" },
    pingIntervalMs: 200,
  });
  try {
    const botReady = await caller.ready();
    assert.equal((botReady.data as { version: string }).version, "2.1.0");

    // The offer is what the browser client posts: trickle offer, null pc_id, camelCase requestData.
    const offer = server.offers[0];
    assert.equal(offer.type, "offer");
    assert.equal(offer.pc_id, null);
    assert.equal(offer.restart_pc, false);
    assert.deepEqual(offer.requestData, { agent: "echo" });
    assert.equal(listCandidates(offer.sdp as string).length, 0);
    const patch = server.patches[0] as { pc_id: string; candidates: Record<string, unknown>[] };
    assert.equal(patch.pc_id, caller.pcId);
    assert.deepEqual(Object.keys(patch.candidates[0]).sort(), [
      "candidate",
      "sdp_mid",
      "sdp_mline_index",
    ]);

    const sent = to48k(await readWav(wav48));
    await caller.streamWav(wav48);
    await sleep(300);
    const back = caller.receivedPcm();

    // Energy: the echoed speech carries the sent speech's loudness...
    const ratio = rms(back) / rms(sent);
    assert.ok(ratio > 0.6 && ratio < 1.5, `rms ratio ${ratio.toFixed(2)}`);
    // ...and its shape over time (syllables), a few frames late at most.
    const { r, lag } = bestCorrelation(envelope(sent), envelope(back));
    assert.ok(r > 0.8, `envelope correlation ${r.toFixed(2)} at lag ${lag}`);

    const frames = Math.ceil(sent.length / 960);
    assert.equal(caller.sentAt.length, frames);
    assert.ok(
      caller.arrivals.length >= frames - 2,
      `${caller.arrivals.length} of ${frames} came back`,
    );
    const firstTrip = caller.arrivals[0].at - caller.sentAt[0];
    assert.ok(firstTrip >= 0 && firstTrip < 100, `first round trip ${firstTrip.toFixed(1)} ms`);
    // Real-time pacing: the stream took its own duration.
    const span = caller.sentAt[frames - 1] - caller.sentAt[0];
    assert.ok(Math.abs(span - (frames - 1) * 20) < 60, `stream span ${span.toFixed(0)} ms`);

    // Keep-alives and trackStatus look like the client's.
    const pings = server.chat.filter((t) => t.startsWith("ping"));
    assert.ok(pings.length >= 3 && pings.every((p) => /^ping: \d{13}$/.test(p)), pings.join(","));
    const status = server.chat.filter((t) => t.includes('"trackStatus"'));
    assert.equal(status.length, 3);
  } finally {
    await caller.hangUp();
  }
  const peer = [...server.peers.values()][0];
  const end = performance.now() + 3000;
  while (server.chatClosed() === 0 && performance.now() < end) await sleep(20);
  assert.equal(server.chatClosed(), 1, "the worker saw the hang-up");
  assert.ok(server.states.includes("connected"));
  assert.equal(peer.state, "connected"); // until ICE consent expiry: see media/rtc/peer.test.ts
  await server.close();
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a refused offer surfaces the HTTP status and leaves nothing open", async () => {
  const server = echoServer();
  await assert.rejects(
    TestCaller.connect({ offerUrl: server.url, headers: { Authorization: "Bearer wrong" } }),
    (e: unknown) => e instanceof CallerHttpError && e.status === 401,
  );
  assert.equal(server.offers.length, 0);
  await server.close();
});

Deno.test("with trickle off the offer carries the caller's candidates and no PATCH is sent", async () => {
  const server = echoServer();
  const caller = await TestCaller.connect({
    offerUrl: server.url,
    headers: { Authorization: `Bearer ${TOKEN}` },
    trickle: false,
  });
  try {
    await caller.ready();
    const sdp = server.offers[0].sdp as string;
    assert.ok(listCandidates(sdp).length > 0);
    assert.ok(listCandidates(sdp).every((c) => c.split(" ")[4] === "127.0.0.1"));
    assert.equal(server.patches.length, 0);
  } finally {
    await caller.hangUp();
    await server.close();
  }
});

Deno.test("a 22.05 kHz espeak WAV is upsampled to 48 kHz like sox does it", async () => {
  const { dir, wav22, wav48 } = await speechWavs();
  const a = await readWav(wav22);
  assert.equal(a.sampleRate, 22050);
  const ours = to48k(a);
  const sox = to48k(await readWav(wav48));
  assert.ok(Math.abs(ours.length - sox.length) <= 3, `${ours.length} vs ${sox.length}`);
  const ratio = rms(ours) / rms(sox);
  assert.ok(ratio > 0.95 && ratio < 1.05, `rms ratio ${ratio}`);
  const { r, lag } = bestCorrelation(envelope(sox), envelope(ours), 2);
  assert.ok(r > 0.98 && lag === 0, `envelope correlation ${r} at lag ${lag}`);
  assert.throws(() => to48k({ sampleRate: 96000, samples: new Int16Array(10) }), /sox/);
  await Deno.remove(dir, { recursive: true });
});
