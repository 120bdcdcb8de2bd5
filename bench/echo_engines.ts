// The two maintained echo cancellers Debian packages, on the same echo (issue 35): SpeexDSP's
// (libspeexdsp1, the worker's: media/caller_audio/echo_canceller.ts, its filter and residual
// suppression without the worker's gate, and with it) and WebRTC's audio processing module 0.3
// (libwebrtc-audio-processing1, its AEC delay-agnostic with the extended filter and high
// suppression, through bench/echo_engines/webrtc_shim.cc built here with g++). A diagnostic, run
// by hand: `deno run -A bench/echo_engines.ts` (needs g++ and libwebrtc-audio-processing-dev).
//
// The bot's espeak-ng voice comes back `delay` ms later at `level` dB, at 16 kHz; halfway, the
// caller's festival voice talks over it. Per engine: how much echo it takes out in the first two
// seconds (while it learns) and after, how loud the caller's words come out against how loud they
// were said, and CPU per second of call audio.
import { callerSpeechWav, speechWav } from "../tests/helpers/audio.ts";
import { readWav, rms } from "../caller/wav.ts";
import { Resampler } from "../wasm/resampler.ts";
import { EchoCanceller } from "../media/caller_audio/echo_canceller.ts";

const dir = await Deno.makeTempDir({ prefix: "wap-" });
const shim = new URL("./echo_engines/webrtc_shim.cc", import.meta.url).pathname;
const flags = ["-DWEBRTC_AUDIO_PROCESSING_ONLY_BUILD", "-I/usr/include/webrtc_audio_processing"];
const built = await new Deno.Command("g++", {
  args: [
    "-O2",
    "-shared",
    "-fPIC",
    "-DWEBRTC_POSIX",
    ...flags,
    "-o",
    `${dir}/libwap.so`,
    shim,
    "-lwebrtc_audio_processing",
  ],
}).output();
if (!built.success) throw new Error(new TextDecoder().decode(built.stderr));
const wap = Deno.dlopen(`${dir}/libwap.so`, {
  wap_new: { parameters: ["i32"], result: "pointer" },
  wap_far: { parameters: ["pointer", "buffer", "i32"], result: "i32" },
  wap_near: { parameters: ["pointer", "buffer", "i32"], result: "i32" },
  wap_free: { parameters: ["pointer"], result: "void" },
}).symbols;

const to16k = (pcm: Int16Array, rate: number) => {
  const r = new Resampler(rate, 16000, { quality: 5 });
  const out = r.process(pcm).slice();
  r.close();
  return out;
};
const text = "Hello, you have reached the hotel desk. We have rooms near the airport, near the " +
  "station and in the old town, and all of them have breakfast included.";
const bot48 = (await readWav(await speechWav(`${text} ${text}`, 0.3, 48000))).samples;
const bot16 = to16k(bot48, 48000);
const near16 = to16k(
  (await readWav(
    await callerSpeechWav("i am looking for a cheap hotel near the airport", 0, 48000),
  ))
    .samples,
  48000,
);

type Engine = "speex" | "speex+gate" | "webrtc";
/** Runs one engine over the whole echo; returns its output and CPU ms. */
function run(engine: Engine, delayMs: number, levelDb: number, near: boolean) {
  const frames = Math.floor(bot48.length / 960);
  const gain = 10 ** (levelDb / 20), delay = delayMs * 16, nearAt = Math.floor(frames / 2) * 320;
  const input = new Int16Array(frames * 320), out = new Int16Array(frames * 320);
  for (let t = 0; t < input.length; t++) {
    const e = t >= delay ? bot16[t - delay] * gain : 0;
    const n = near && t >= nearAt ? near16[t - nearAt] ?? 0 : 0;
    input[t] = Math.max(-32768, Math.min(32767, Math.round(e + n)));
  }
  let cpu = 0;
  if (engine === "webrtc") {
    const st = wap.wap_new(16000);
    const far = new Int16Array(160), cap = new Int16Array(160);
    for (let i = 0; i < frames * 2; i++) {
      far.set(bot16.subarray(i * 160, i * 160 + 160));
      cap.set(input.subarray(i * 160, i * 160 + 160));
      const t0 = performance.now();
      wap.wap_far(st, far, 160);
      wap.wap_near(st, cap, 160);
      cpu += performance.now() - t0;
      out.set(cap, i * 160);
    }
    wap.wap_free(st);
  } else {
    let at = 0;
    const c = new EchoCanceller((pcm) => {
      out.set(pcm, at);
      at += 320;
    }, { gate: engine === "speex+gate" });
    for (let i = 0; i < frames; i++) {
      const t0 = performance.now();
      c.sent(bot48.subarray(i * 960, i * 960 + 960));
      c.push(input.subarray(i * 320, i * 320 + 320));
      cpu += performance.now() - t0;
    }
    c.close();
  }
  return { input, out, cpuMsPerS: cpu / (frames * 0.02), nearAt };
}

const db = (a: number, b: number) => 20 * Math.log10(Math.max(1, a) / Math.max(1, b));
console.log(
  "| delay ms | level dB | engine | echo taken out, first 2 s | after | caller's words kept | CPU ms/s |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- |");
for (const [delay, level] of [[30, -6], [120, -6], [300, -6], [120, -12], [120, -20]]) {
  for (const engine of ["speex", "speex+gate", "webrtc"] as Engine[]) {
    const echo = run(engine, delay, level, false);
    const dt = run(engine, delay, level, true);
    const learn = 32000 + delay * 16, half = dt.nearAt;
    const first = db(rms(echo.input, delay * 16, learn), rms(echo.out, delay * 16, learn));
    const after = db(rms(echo.input, learn, half), rms(echo.out, learn, half));
    const end = Math.min(half + near16.length, dt.out.length);
    // The caller's words as they came out, against the same stretch said alone.
    const kept = -db(rms(near16, 0, end - half), rms(dt.out, half, end));
    console.log(
      `| ${delay} | ${level} | ${engine} | ${first.toFixed(1)} dB | ${after.toFixed(1)} dB | ${
        kept.toFixed(1)
      } dB | ${((echo.cpuMsPerS + dt.cpuMsPerS) / 2).toFixed(2)} |`,
    );
  }
}
await Deno.remove(dir, { recursive: true });
