// CPU of one phone call's media, per second of audio, both directions, without the network:
// in, 60 s of festival speech as μ-law RTP packets through the caller's timeline (parse, jitter
// buffer, G.711 decode, 8 → 16 kHz) to 16 kHz frames; out, the same speech as 48 kHz frames
// through 48 → 8 kHz, G.711 encode and the RTP header. Process CPU time (process.cpuUsage), best
// of 5 runs, so other work on the shared host counts as little as possible.
// Run: deno run -A bench/phone_media.ts
import { cpuMsOf as cpuMs } from "./harness/proc.ts";
import { callerSpeechWav } from "../tests/helpers/audio.ts";
import { readWav } from "../caller/wav.ts";
import { CallerTimeline } from "../media/phone/caller_timeline.ts";
import { BOT_FRAME, BotEdge } from "../media/phone/edge_audio.ts";
import { g711Encode } from "../media/phone/g711.ts";
import { buildRtp, parseRtp, type RtpPacket } from "../media/phone/rtp_packet.ts";

const SECONDS = 60;
const RUNS = 5;

async function speechFor(rate: number): Promise<Int16Array> {
  const one = (await readWav(
    await callerSpeechWav("could you send me the bill by email, and the receipt too", 0.2, rate),
  )).samples;
  const out = new Int16Array(SECONDS * rate);
  for (let at = 0; at < out.length; at += one.length) {
    out.set(one.subarray(0, Math.min(one.length, out.length - at)), at);
  }
  return out;
}

const speech8k = await speechFor(8000), speech48k = await speechFor(48000);
const ulaw = g711Encode("PCMU", speech8k);
const packets = SECONDS * 50;
const datagrams: Uint8Array[] = [];
for (let i = 0; i < packets; i++) {
  datagrams.push(buildRtp({
    marker: i === 0,
    payloadType: 0,
    sequenceNumber: i & 0xffff,
    timestamp: i * 160,
    ssrc: 1,
  }, ulaw.subarray(i * 160, (i + 1) * 160)));
}

function inbound(): number {
  let frames = 0;
  const timeline = new CallerTimeline({
    law: "PCMU",
    payloadType: 0,
    dtmfPayloadType: 101,
    onFrame: () => frames++,
    onDigit: () => {},
  });
  const ms = cpuMs(() => {
    for (let i = 0; i < packets; i++) {
      const d = datagrams[i];
      timeline.push(parseRtp(d) as RtpPacket, d, i * 20);
    }
    timeline.flush();
  });
  timeline.close();
  if (frames !== packets) throw new Error(`${frames} frames for ${packets} packets`);
  return ms;
}

function outbound(): number {
  const bot = new BotEdge("PCMU");
  let bytes = 0;
  const ms = cpuMs(() => {
    for (let i = 0; i < packets; i++) {
      const payload = bot.encode(speech48k.subarray(i * BOT_FRAME, (i + 1) * BOT_FRAME));
      bytes += buildRtp({
        marker: false,
        payloadType: 0,
        sequenceNumber: i,
        timestamp: i * 160,
        ssrc: 2,
      }, payload).length;
    }
  });
  bot.close();
  if (bytes !== packets * 172) throw new Error("short packets");
  return ms;
}

inbound(); // warm-up: JIT and the WASM's first allocations
outbound();
const ins: number[] = [], outs: number[] = [];
for (let r = 0; r < RUNS; r++) {
  ins.push(inbound());
  outs.push(outbound());
}
const best = (xs: number[]) => Math.min(...xs);
const perSecond = (ms: number) => ms / SECONDS;
const inMs = perSecond(best(ins)), outMs = perSecond(best(outs));
const total = inMs + outMs;
console.log(`${SECONDS} s of speech each way, best of ${RUNS} (CPU ms per second of audio):`);
console.log(`  in  (RTP → jitter buffer → G.711 decode → 8→16 kHz): ${inMs.toFixed(3)} ms/s`);
console.log(`  out (48→8 kHz → G.711 encode → RTP header):          ${outMs.toFixed(3)} ms/s`);
console.log(
  `  both: ${total.toFixed(3)} ms/s = ${(total / 10).toFixed(3)} % of a core per call,` +
    ` ~${Math.floor(1000 / total)} calls' media per core`,
);
console.log(
  `  runs in: ${ins.map((x) => x.toFixed(1)).join(", ")} ms; out: ${
    outs.map((x) => x.toFixed(1)).join(", ")
  } ms`,
);
