// What a provider's media stream costs the worker per call, apart from the pipeline behind it:
// the caller's side (JSON.parse of a media message, base64, μ-law or 16-bit PCM decode, the
// caller timeline, 8 → 16 kHz) and the bot's (48 → 8 kHz, μ-law or PCM encode, base64,
// JSON.stringify of the provider's message), for one minute of audio each way, per provider.
//   deno run -A bench/media/phone_stream_line.ts
import { twilioDialect } from "../../media/phone/carriers/twilio/dialect.ts";
import { plivoDialect } from "../../media/phone/carriers/plivo/dialect.ts";
import { exotelDialect } from "../../media/phone/carriers/exotel/dialect.ts";
import type { StreamDialect } from "../../media/phone/carriers/dialect.ts";
import { CallerTimeline } from "../../media/phone/carriers/caller_timeline.ts";
import { BotVoiceOut } from "../../media/phone/carriers/bot_voice_out.ts";
import { CallerEdge } from "../../media/phone/edge_audio.ts";
import { g711Decode, g711Encode } from "../../media/phone/g711.ts";
import { median } from "../harness/stats.ts";

const SECONDS = 60;
const ROUNDS = 5;

function speechLike(samples: number, rate: number): Int16Array {
  return Int16Array.from({ length: samples }, (_, i) =>
    Math.round(
      6000 * Math.sin((2 * Math.PI * 220 * i) / rate) +
        2000 * Math.sin((2 * Math.PI * 1330 * i) / rate),
    ));
}

/** The provider's media messages for SECONDS of caller audio, as text on the wire. */
function callerMessages(dialect: StreamDialect): string[] {
  const chunkMs = dialect.carrier === "exotel" ? 100 : 20;
  const pcm = speechLike(SECONDS * 8000, 8000);
  const out: string[] = [];
  for (let at = 0, n = 0; at < pcm.length; at += chunkMs * 8, n++) {
    const chunk = pcm.subarray(at, at + chunkMs * 8);
    let payload: string;
    if (dialect.audio === "mulaw") payload = g711Encode("PCMU", chunk).toBase64();
    else {
      const bytes = new Uint8Array(chunk.length * 2);
      const view = new DataView(bytes.buffer);
      chunk.forEach((s, i) => view.setInt16(i * 2, s, true));
      payload = bytes.toBase64();
    }
    out.push(JSON.stringify({
      event: "media",
      sequenceNumber: String(n + 2),
      streamSid: "MZ0",
      stream_sid: "MZ0",
      media: { track: "inbound", chunk: String(n + 1), timestamp: String(n * chunkMs), payload },
    }));
  }
  return out;
}

function callerSide(dialect: StreamDialect, messages: string[]): number {
  let frames = 0;
  const edge = new CallerEdge("PCMU", () => frames++);
  const timeline = new CallerTimeline((f) => edge.pushPcm(f));
  const t0 = performance.now();
  for (const text of messages) {
    const e = dialect.read(JSON.parse(text));
    if (e.kind !== "media") throw new Error("not media");
    const bytes = Uint8Array.fromBase64(e.payload);
    let pcm: Int16Array;
    if (dialect.audio === "mulaw") pcm = g711Decode("PCMU", bytes);
    else {
      const view = new DataView(bytes.buffer);
      pcm = Int16Array.from({ length: bytes.length >> 1 }, (_, i) => view.getInt16(i * 2, true));
    }
    timeline.push(pcm, e.timestampMs);
  }
  const ms = performance.now() - t0;
  edge.close();
  if (frames !== SECONDS * 50) throw new Error(`${frames} frames`);
  return ms;
}

function botSide(dialect: StreamDialect): number {
  const pcm = speechLike(SECONDS * 48000, 48000);
  let n = 0;
  let bytes = 0;
  const out = new BotVoiceOut(dialect, (payload) => {
    bytes += JSON.stringify(dialect.media("MZ0", payload, { audio: dialect.audio, rate: 8000 }))
      .length;
  }, () => {});
  out.source = { next: () => n < SECONDS * 50 ? pcm.subarray(960 * n, 960 * ++n) : undefined };
  const t0 = performance.now();
  for (let i = 0; i < SECONDS * 50 + 12; i++) out.tick();
  const ms = performance.now() - t0;
  out.close();
  if (bytes === 0) throw new Error("nothing sent");
  return ms;
}

console.log(`| provider | caller side, ms per call-second | bot side, ms per call-second |`);
console.log(`|---|---|---|`);
for (const dialect of [twilioDialect, plivoDialect, exotelDialect]) {
  const messages = callerMessages(dialect);
  callerSide(dialect, messages); // warm-up
  botSide(dialect);
  const caller = median(Array.from({ length: ROUNDS }, () => callerSide(dialect, messages)));
  const bot = median(Array.from({ length: ROUNDS }, () => botSide(dialect)));
  console.log(
    `| ${dialect.carrier} | ${(caller / SECONDS).toFixed(3)} | ${(bot / SECONDS).toFixed(3)} |`,
  );
}
