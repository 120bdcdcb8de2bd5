// In-band FEC, end to end through libopus: with the encoder told to expect loss
// (setExpectedLoss, which the bot's voice follows from the caller's reports), a lost frame is
// rebuilt from the next packet (OpusDecoder.recover) close to what the frame itself decodes to;
// without FEC, recover() can only conceal, which misses a voice whose pitch keeps moving.
import assert from "node:assert/strict";
import { OpusDecoder, OpusEncoder } from "./opus.ts";

/** A voiced sound whose pitch changes every 20 ms: concealment cannot guess the next frame. */
function voice(frames: number): Int16Array[] {
  const out: Int16Array[] = [];
  let phase = 0;
  for (let f = 0; f < frames; f++) {
    const f0 = 110 + ((f * 37) % 140);
    const pcm = new Int16Array(960);
    for (let i = 0; i < 960; i++) {
      phase += (2 * Math.PI * f0) / 48000;
      let s = 0;
      for (let h = 1; h <= 8; h++) s += Math.sin(h * phase) / h;
      pcm[i] = Math.round(5000 * s);
    }
    out.push(pcm);
  }
  return out;
}

function snrDb(ref: Int16Array, got: Int16Array): number {
  let sig = 0, err = 0;
  for (let i = 0; i < ref.length; i++) {
    sig += ref[i] ** 2;
    err += (ref[i] - got[i]) ** 2;
  }
  return 10 * Math.log10(sig / Math.max(err, 1));
}

/** Mean SNR of frames rebuilt by recover() against the same frames decoded normally. */
function rebuiltSnr(expectedLoss: number): number {
  const enc = new OpusEncoder({ complexity: 5 });
  if (expectedLoss > 0) enc.setExpectedLoss(expectedLoss);
  const packets = voice(120).map((pcm) => enc.encode(pcm).slice());
  enc.close();
  const snrs: number[] = [];
  for (let lost = 40; lost < 110; lost += 7) {
    const reference = new OpusDecoder({ sampleRate: 48000 });
    const lossy = new OpusDecoder({ sampleRate: 48000 });
    for (let k = 0; k < lost; k++) {
      reference.decode(packets[k]);
      lossy.decode(packets[k]);
    }
    const want = reference.decode(packets[lost]).slice();
    snrs.push(snrDb(want, lossy.recover(packets[lost + 1])));
    reference.close();
    lossy.close();
  }
  return snrs.reduce((a, b) => a + b, 0) / snrs.length;
}

Deno.test("a lost frame is rebuilt from the next packet's FEC; without FEC it is only concealed", () => {
  const withFec = rebuiltSnr(20);
  const without = rebuiltSnr(0);
  console.log(
    `rebuilt frame SNR: FEC ${withFec.toFixed(1)} dB, concealment ${without.toFixed(1)} dB`,
  );
  assert.ok(withFec > without + 3, `FEC ${withFec.toFixed(1)} dB vs ${without.toFixed(1)} dB`);
});

Deno.test("setExpectedLoss(0) turns FEC off again and a closed encoder refuses it", () => {
  const enc = new OpusEncoder();
  enc.setExpectedLoss(15);
  enc.setExpectedLoss(0);
  enc.close();
  assert.throws(() => enc.setExpectedLoss(10), /closed/);
});
