// The canceller on real speech: espeak-ng's bot voice at 48 kHz as the line sends it, coming back
// delayed and attenuated in the 16 kHz caller frames, with and without festival's caller talking
// over it. Figures over many settings are bench/echo.ts's; these check that the filter converges,
// leaves the caller's own voice, and that the reference's pairing survives bursts.
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { callerSpeechWav, speechWav } from "../../tests/helpers/audio.ts";
import { readWav, rms } from "../../caller/wav.ts";
import { Resampler } from "../../wasm/resampler.ts";
import { ECHO_FRAME, EchoCanceller } from "./echo_canceller.ts";

const BOT = "We have three hotels near the airport, and all of them have rooms free tonight.";
const CALLER = "i am looking for a cheap hotel";

async function botVoice(): Promise<Int16Array> {
  return (await readWav(await speechWav(`${BOT} ${BOT}`, 0.3, 48000))).samples;
}

/** The bot's 48 kHz voice at 16 kHz, as the echo path hears it. */
function to16k(pcm48k: Int16Array): Int16Array {
  const r = new Resampler(48000, 16000, { quality: 5 });
  const out = r.process(pcm48k).slice();
  r.close();
  return out;
}

/**
 * Runs a call's worth of frames: the line sends bot frame i, then caller frame i arrives holding
 * the bot's voice from `delayMs` before, at `gainDb`, plus `near` (the caller's own voice) from
 * `nearAt` frames on. Returns the caller frames before and after the canceller.
 */
function run(
  bot48k: Int16Array,
  opts: { delayMs: number; gainDb: number; near?: Int16Array; nearAt?: number; burst?: boolean },
) {
  let written = 0;
  const frames = Math.floor(bot48k.length / 960);
  const input = new Int16Array(frames * ECHO_FRAME), output = new Int16Array(frames * ECHO_FRAME);
  const canceller = new EchoCanceller((out) => {
    output.set(out, written * ECHO_FRAME);
    written++;
  });
  const bot16k = to16k(bot48k);
  const delay = Math.round(opts.delayMs * 16);
  const gain = 10 ** (opts.gainDb / 20);
  const nearStart = (opts.nearAt ?? 0) * ECHO_FRAME;
  const callerFrame = (i: number) => {
    const f = new Int16Array(ECHO_FRAME);
    for (let j = 0; j < ECHO_FRAME; j++) {
      const t = i * ECHO_FRAME + j;
      const echo = t >= delay ? bot16k[t - delay] * gain : 0;
      const near = opts.near && t >= nearStart ? opts.near[t - nearStart] ?? 0 : 0;
      f[j] = Math.max(-32768, Math.min(32767, Math.round(echo + near)));
    }
    input.set(f, i * ECHO_FRAME);
    canceller.push(f);
  };
  for (let i = 0; i < frames; i++) {
    canceller.sent(bot48k.subarray(i * 960, (i + 1) * 960));
    // A burst: three caller frames come late, then together (the jitter buffer lets them out).
    if (opts.burst && i % 50 >= 47) continue;
    if (opts.burst && i % 50 === 0 && i > 0) { for (const k of [3, 2, 1]) callerFrame(i - k); }
    callerFrame(i);
  }
  const counts = { ...canceller.counts };
  canceller.close();
  return { input, output, counts, frames };
}

/** Echo return loss enhancement (dB) over the second half, once the filter has converged. */
function erle(input: Int16Array, output: Int16Array): number {
  const from = Math.floor(input.length / 2);
  return 20 * Math.log10(rms(input, from) / Math.max(1, rms(output, from)));
}

Deno.test("the bot's echo on the caller's frames is cancelled at the delays and levels of a phone line", async () => {
  const bot = await botVoice();
  for (const [delayMs, gainDb] of [[30, -6], [120, -12], [300, -20]]) {
    const { input, output } = run(bot, { delayMs, gainDb });
    const db = erle(input, output);
    console.log(`${delayMs} ms, ${gainDb} dB: ${db.toFixed(1)} dB taken out`);
    assert(db > 15, `${delayMs} ms at ${gainDb} dB: only ${db.toFixed(1)} dB taken out`);
  }
});

Deno.test("the caller's own voice over the bot's echo comes through the canceller", async () => {
  const bot = await botVoice();
  const near = to16k((await readWav(await callerSpeechWav(CALLER, 0, 48000))).samples);
  const nearAt = Math.floor(bot.length / 960 / 2);
  const { output, frames } = run(bot, { delayMs: 120, gainDb: -6, near, nearAt });
  const { output: echoOnly } = run(bot, { delayMs: 120, gainDb: -6 });
  // Over the caller's words, the output carries them: far louder than the echo left alone.
  const from = nearAt * ECHO_FRAME, to = Math.min(from + near.length, frames * ECHO_FRAME);
  const voice = rms(output, from, to), left = rms(echoOnly, from, to);
  assert(voice > 4 * left, `caller ${voice.toFixed(0)} against residual echo ${left.toFixed(0)}`);
  // And not much quieter than the caller said them (double-talk keeps the suppression mild).
  const said = rms(near, 0, to - from);
  assert(voice > said / 4, `caller's words came out at ${voice.toFixed(0)} of ${said.toFixed(0)}`);
});

Deno.test("caller frames that come in bursts or before their pair stay paired with the bot frames sent with them", async () => {
  const bot = await botVoice();
  const { input, output, counts } = run(bot, { delayMs: 120, gainDb: -6, burst: true });
  assertEquals(counts.realigned, 0);
  const db = erle(input, output);
  assert(db > 15, `only ${db.toFixed(1)} dB taken out with bursts`);
});

Deno.test("without the bot's audio as reference nothing is taken out (the test's echo is real)", async () => {
  const bot = await botVoice();
  let outE = 0;
  const canceller = new EchoCanceller((out) => void (outE += rms(out) ** 2));
  const bot16k = to16k(bot);
  let inE = 0;
  for (let i = 0; i + 1 < bot16k.length / ECHO_FRAME; i++) {
    canceller.sent(undefined);
    const f = bot16k.slice(i * ECHO_FRAME, (i + 1) * ECHO_FRAME).map((x) => x / 2);
    canceller.push(f);
    inE += rms(f) ** 2;
  }
  canceller.close();
  assert(outE > inE / 2, `${outE} of ${inE}: something was removed without a reference`);
});

Deno.test("caller frames before the bot's first frame, and after close, pass through as they came", () => {
  const out: Int16Array[] = [];
  const canceller = new EchoCanceller((pcm) => out.push(pcm.slice()));
  const f = new Int16Array(ECHO_FRAME).fill(1000);
  canceller.push(f);
  canceller.close();
  canceller.sent(new Int16Array(960));
  canceller.push(f);
  assertEquals(out, [f, f]);
});
