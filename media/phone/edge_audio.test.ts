import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { callerSpeechWav } from "../../tests/helpers/audio.ts";
import { readWav } from "../../caller/wav.ts";
import { resample } from "../../wasm/resampler.ts";
import {
  BOT_FRAME,
  BotEdge,
  CALLER_FRAME,
  CallerEdge,
  FrameResampler,
  LINE_FRAME,
} from "./edge_audio.ts";
import { g711Decode } from "./g711.ts";
import { bestLag, snrDb } from "../../tests/helpers/signal_compare.ts";

const SENTENCE = "could you send me the bill by email";

async function speechAt(rate: number): Promise<Int16Array> {
  return (await readWav(await callerSpeechWav(SENTENCE, 0.3, rate))).samples;
}

Deno.test("frame by frame equals one pass over the whole speech: the filter's state crosses every frame edge", async () => {
  const speech8k = await speechAt(8000);
  const frames = Math.floor(speech8k.length / LINE_FRAME);
  const whole = resample(speech8k.subarray(0, frames * LINE_FRAME), 8000, 16000, { quality: 5 });
  const r = new FrameResampler(8000, 16000, LINE_FRAME, CALLER_FRAME);
  const streamed = new Int16Array(frames * CALLER_FRAME);
  for (let f = 0; f < frames; f++) {
    streamed.set(r.push(speech8k.subarray(f * LINE_FRAME, (f + 1) * LINE_FRAME)), f * CALLER_FRAME);
  }
  r.close();
  assert(r.primed > 0 && r.primed <= CALLER_FRAME / 2, `primed ${r.primed}`);
  assertEquals(r.shortfall, 0);
  // The stream is the one-pass output delayed by the filter's delay, sample for sample.
  const n = streamed.length - r.primed;
  let differ = 0;
  for (let i = 0; i < n; i++) if (streamed[i + r.primed] !== whole[i]) differ++;
  assertEquals(differ, 0);
  assertEquals(Array.from(streamed.subarray(0, r.primed)), new Array(r.primed).fill(0));
});

Deno.test("festival speech goes bot → G.711 → caller with one frame per frame and the speech kept", async () => {
  const speech48k = await speechAt(48000);
  // The reference: the same speech taken to 16 kHz by sox through 8 kHz (band-limited as a phone is).
  const ref16k = await speechAt(16000);
  const frames = Math.floor(speech48k.length / BOT_FRAME);
  for (const law of ["PCMU", "PCMA"] as const) {
    const bot = new BotEdge(law);
    const got: Int16Array[] = [];
    const caller = new CallerEdge(law, (pcm) => got.push(pcm.slice()));
    const payloads: number[] = [];
    for (let f = 0; f < frames; f++) {
      const payload = bot.encode(speech48k.subarray(f * BOT_FRAME, (f + 1) * BOT_FRAME));
      payloads.push(payload.length);
      caller.pushPayload(payload);
    }
    bot.close();
    caller.close();
    assertEquals(payloads.length, frames);
    assert(payloads.every((n) => n === LINE_FRAME));
    assertEquals(got.length, frames);
    assert(got.every((f) => f.length === CALLER_FRAME));
    const out = new Int16Array(frames * CALLER_FRAME);
    got.forEach((f, i) => out.set(f, i * CALLER_FRAME));
    // sox's 16 kHz keeps up to 8 kHz; ours went through 8 kHz: compare below 3.4 kHz (phone band).
    const refPhone = resample(resample(ref16k, 16000, 8000), 8000, 16000);
    const lag = bestLag(refPhone, out, 480);
    const { snr, correlation } = snrDb(refPhone, out, lag);
    console.log(
      `${law}: lag ${lag} samples, SNR ${snr.toFixed(1)} dB, correlation ${correlation.toFixed(4)}`,
    );
    assert(correlation > 0.99, `correlation ${correlation}`);
    assert(snr > 20, `SNR ${snr} dB`);
  }
});

Deno.test("silence after speech fades through the filter, then is one constant payload", () => {
  const bot = new BotEdge("PCMU");
  const loud = new Int16Array(BOT_FRAME).map((_, i) => Math.round(8000 * Math.sin(i / 10)));
  bot.encode(loud);
  const tail1 = bot.encode(undefined).slice();
  const tail2 = bot.encode(undefined).slice();
  const quiet = bot.encode(undefined);
  bot.close();
  // The filter's tail carries the last sound into the first silent frame, then dies out.
  const level = (p: Uint8Array) => Math.max(...Array.from(g711Decode("PCMU", p), Math.abs));
  assert(level(tail1) > 0, "the tail is in the first silent frame");
  assertEquals(level(tail2), 0);
  assertEquals(Array.from(quiet), new Array(LINE_FRAME).fill(0xff));
});

Deno.test("a frame of the wrong size is refused", () => {
  const r = new FrameResampler(48000, 8000, BOT_FRAME, LINE_FRAME);
  let threw = false;
  try {
    r.push(new Int16Array(959));
  } catch (e) {
    threw = e instanceof RangeError;
  }
  r.close();
  assert(threw);
});
