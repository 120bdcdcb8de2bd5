import assert from "node:assert/strict";
import { OPUS_SILENCE_20MS, OpusDecoder, OpusEncoder } from "../../wasm/opus.ts";
import { OpusRtpSender } from "../rtc/rtp_sender.ts";
import { OutboundAudio } from "./outbound.ts";
import { RecordingSink } from "../../tests/helpers/rtp_sink.ts";

const tone = () => Int16Array.from({ length: 960 }, (_, i) => 8000 * Math.sin(i / 5));

/** Three distinct real 20 ms packets. */
function packets(): Uint8Array[] {
  const enc = new OpusEncoder();
  const out = [1, 2, 3].map((k) => enc.encode(tone().map((s) => s / k)).slice());
  enc.close();
  return out;
}

/** Packets from one reused buffer (as the echo's are), then silence; counts next() calls. */
function packetSource(list: Uint8Array[]) {
  const buffer = new Uint8Array(1275);
  let i = 0;
  const source = {
    pcmAsked: 0,
    nextPacket: () => {
      buffer.fill(0xee); // whatever was lent last time is overwritten now
      const p = list[i++];
      if (!p) return undefined;
      buffer.set(p);
      return buffer.subarray(0, p.length);
    },
    next: () => {
      source.pcmAsked++;
      return undefined;
    },
  };
  return source;
}

Deno.test("a source's own packets are sent as they are, copied, and counted as voiced", async () => {
  const sink = new RecordingSink();
  const tx = new OpusRtpSender(sink);
  const out = new OutboundAudio(() => tx);
  const sent = packets();
  const source = packetSource(sent);
  out.source = source;
  out.start();
  await sink.received(5);
  out.stop();
  const payloads = sink.packets.map((p) => p.payload);
  assert.deepEqual(payloads.slice(0, 3).map((p) => [...p]), sent.map((p) => [...p]));
  for (const p of payloads.slice(3)) assert.equal(p.buffer, OPUS_SILENCE_20MS.buffer);
  assert.equal(out.voiced, 3);
  // Packets took the place of PCM: next() was asked only once they ran out.
  assert.equal(source.pcmAsked, sink.packets.length - 3);
  // 960 samples on the RTP clock per packet, whatever the payload (more if the pacer skipped).
  const ts = sink.packets.map((p) => p.header.timestamp);
  for (let i = 1; i < ts.length; i++) assert.equal(((ts[i] - ts[i - 1]) >>> 0) % 960, 0);
});

Deno.test("with a tap the outbound side asks for PCM and encodes it, never for packets", async () => {
  const sink = new RecordingSink();
  const tx = new OpusRtpSender(sink);
  const out = new OutboundAudio(() => tx);
  let packetsAsked = 0;
  out.source = {
    nextPacket: () => {
      packetsAsked++;
      return OPUS_SILENCE_20MS;
    },
    next: () => tone(),
  };
  const tapped: (Int16Array | undefined)[] = [];
  out.tap = (pcm) => tapped.push(pcm);
  out.start();
  await sink.received(3);
  out.stop();
  assert.equal(packetsAsked, 0);
  assert.ok(tapped.length >= 3 && tapped.every((pcm) => pcm?.length === 960));
  assert.equal(out.voiced, sink.packets.length);
  const dec = new OpusDecoder({ sampleRate: 48000 });
  for (const p of sink.packets) {
    assert.notEqual(p.payload.buffer, OPUS_SILENCE_20MS.buffer);
    assert.ok(dec.decode(p.payload).some((s) => s !== 0), "the encoded tone");
  }
  dec.close();
});
