// The bot's Opus encoder expects the loss the caller's receiver reports (RTCP RR, read from
// werift's sender about once a second) and sizes its in-band FEC from it, so the browser can
// rebuild a lost frame of the bot's voice from the next packet. Loss is taken at once and
// forgotten slowly; with no loss reported the encoder spends nothing on FEC.
import assert from "node:assert/strict";
import type { RtpPacket } from "werift";
import { OpusDecoder } from "../../wasm/opus.ts";
import { OpusRtpSender } from "../rtc/rtp_sender.ts";
import { ExpectedLoss, MAX_EXPECTED_LOSS_PERCENT } from "./loss_adaptation.ts";
import { OutboundAudio } from "./outbound.ts";
import { RecordingSink } from "../../tests/helpers/rtp_sink.ts";

Deno.test("expected loss rises with a report at once, falls slowly and is capped", () => {
  const loss = new ExpectedLoss();
  assert.equal(loss.report(0.2), 20);
  assert.equal(loss.report(0.2), undefined, "unchanged: nothing to apply");
  const falling = [0, 0, 0, 0, 0].map(() => loss.report(0) ?? loss.percent);
  assert.ok(falling.every((p, i) => p < (i ? falling[i - 1] : 20)), `${falling}`);
  assert.ok(falling[4] > 5, `forgotten too fast: ${falling}`);
  assert.equal(loss.report(0.9), MAX_EXPECTED_LOSS_PERCENT);
});

/** A sink whose far end reports `fraction` of our packets lost, as werift's sender keeps it. */
class ReportedSink extends RecordingSink {
  constructor(readonly remoteFractionLost: number) {
    super();
  }
}

function snrDb(ref: Int16Array, got: Int16Array): number {
  let sig = 0, err = 0;
  for (let i = 0; i < ref.length; i++) {
    sig += ref[i] ** 2;
    err += (ref[i] - got[i]) ** 2;
  }
  return 10 * Math.log10(sig / Math.max(err, 1));
}

/** Speaks a moving-pitch voice for 100 frames; returns the mean SNR of frames rebuilt by FEC. */
async function rebuiltSnr(reportedLoss: number): Promise<number> {
  const sink = new ReportedSink(reportedLoss);
  const out = new OutboundAudio(() => new OpusRtpSender(sink));
  let frame = 0, phase = 0;
  out.source = {
    next: () => {
      const f0 = 110 + ((frame++ * 37) % 140);
      const pcm = new Int16Array(960);
      for (let i = 0; i < 960; i++) {
        phase += (2 * Math.PI * f0) / 48000;
        pcm[i] = Math.round(5000 * (Math.sin(phase) + Math.sin(2 * phase) / 2));
      }
      return pcm;
    },
  };
  out.start();
  await sink.received(100);
  out.stop();
  const packets = sink.packets.map((p: RtpPacket) => new Uint8Array(p.payload));
  const snrs: number[] = [];
  // From frame 60: the loss report was read (every 50 frames of the shared clock) before.
  for (let lost = 60; lost < 98; lost += 5) {
    const reference = new OpusDecoder({ sampleRate: 48000 });
    const lossy = new OpusDecoder({ sampleRate: 48000 });
    for (let k = 0; k < lost; k++) (reference.decode(packets[k]), lossy.decode(packets[k]));
    snrs.push(snrDb(reference.decode(packets[lost]).slice(), lossy.recover(packets[lost + 1])));
    reference.close();
    lossy.close();
  }
  return snrs.reduce((a, b) => a + b, 0) / snrs.length;
}

Deno.test("the bot's voice carries FEC once the caller reports loss, none without", async () => {
  const reported = await rebuiltSnr(0.2);
  const clean = await rebuiltSnr(0);
  console.log(
    `rebuilt bot frames: ${reported.toFixed(1)} dB with 20 % reported, ${
      clean.toFixed(1)
    } dB with none`,
  );
  assert.ok(reported > clean + 2, `${reported.toFixed(1)} dB vs ${clean.toFixed(1)} dB`);
});
