// Noise suppression of the caller's audio (media/caller_audio/noise_suppressor.ts, RNNoise) on
// and off, through the real stage a call uses: CallerAudio with the Silero VAD and pocketsphinx
// (media/stt/pocketsphinx.ts), adaptive end of turn. Figures, nothing asserted.
// Run: deno run -A bench/media/noise.ts [--cpu-only] [--verbose]
//      BENCH_NOISE_SENTENCES=20  BENCH_NOISE_SNRS=20,10,5
//      BENCH_NOISE_KINDS=brown,pink,white,babble
//
// Audio: festival saying SCRIPTS and HELD_SCRIPTS (tests/helpers/test_speech.ts) at 16 kHz,
// 0.5 s of the room before the words and 3 s after; noise of a kind (caller/noise.ts; babble =
// four other festival talkers saying DEV_SCRIPTS, summed) mixed at an SNR against the speech's
// own RMS, running through the whole turn. Not through Opus (the noise would be in the room,
// before the browser's encoder; bench/media/stt.ts measures Opus's own cost to WER). Each sentence is one turn on a fresh CallerAudio, pushed in 20 ms
// frames, each once the VAD has acted on the one before.
//  1. per noise kind and SNR, off and rnnoise: WER over the turns' text (the user turns sent);
//     VAD end-of-speech error = where the VAD put the end of the speech (its last pause with no
//     resume after) minus where the words really end (the clean speech above a level), median
//     and worst, over the turns the VAD ended while the noise went on; "held open": turns whose
//     end the VAD found only once the noise stopped (3 s after the words; 2 s of quiet follow);
//  2. CPU per call-second of the stage alone (process.cpuUsage, this thread), split into
//     RNNoise and the two resampler passes, and what decoding at 48 kHz would cost instead.
import { setQuiet } from "../../common/log.ts";
import type { NoiseSuppression } from "../../common/noise_suppression.ts";
import { noise, type NoiseKind } from "../../caller/noise.ts";
import {
  CallerAudio,
  type CallerHooks,
  type UtteranceRecord,
} from "../../media/caller_audio/caller_audio.ts";
import { NoiseSuppressor } from "../../media/caller_audio/noise_suppressor.ts";
import { TurnLog } from "../../media/call/turn_record.ts";
import { RecognitionRouter } from "../../media/engines/routing.ts";
import { PocketsphinxEngine } from "../../media/stt/pocketsphinx.ts";
import { werCount } from "../../media/stt/wer.ts";
import { VoiceActivity } from "../../media/vad/voice_activity.ts";
import { Resampler } from "../../wasm/resampler.ts";
import { OpusDecoder, OpusEncoder } from "../../wasm/opus.ts";
import { concat, silence, speechBounds } from "../../tests/helpers/test_signals.ts";
import { DEV_SCRIPTS, HELD_SCRIPTS, SCRIPTS, speech16k } from "../../tests/helpers/test_speech.ts";
import { median } from "../harness/stats.ts";
import { cpuMsOf } from "../harness/proc.ts";
import { setTimeout as sleep } from "node:timers/promises";

setQuiet(true);
const EN = "LANGUAGE_EN";
const FRAME = 320;
/** The caller's sentences; DEV_SCRIPTS are the babble's. */
const TURNS = [...SCRIPTS, ...HELD_SCRIPTS];
const SENTENCES = Number(Deno.env.get("BENCH_NOISE_SENTENCES") ?? TURNS.length);
const SNRS = (Deno.env.get("BENCH_NOISE_SNRS") ?? "20,10,5").split(",").map(Number);
type Kind = NoiseKind | "babble";
const KINDS = (Deno.env.get("BENCH_NOISE_KINDS") ?? "brown,pink,white,babble").split(",") as Kind[];
/** Each turn's script and words on stderr. */
const VERBOSE = Deno.args.includes("--verbose");
const LEAD_MS = 500, TAIL_MS = 3000, QUIET_MS = 2000;

const rms = (pcm: ArrayLike<number>, from = 0, to = pcm.length) => {
  let s = 0;
  for (let i = from; i < to; i++) s += pcm[i] * pcm[i];
  return Math.sqrt(s / Math.max(1, to - from));
};

/** Four festival talkers at once, unit RMS, at least `n` samples. */
async function babble(n: number): Promise<Float64Array> {
  const talkers: Int16Array[] = [];
  for (let t = 0; t < 4; t++) {
    const parts: Int16Array[] = [];
    let len = 0;
    for (let i = t; len < n; i += 4) {
      const s = await speech16k(DEV_SCRIPTS[i % DEV_SCRIPTS.length]);
      parts.push(s);
      len += s.length;
    }
    // Each talker starts at a different point, so pauses do not line up.
    const all = concat(...parts);
    talkers.push(all.subarray((t * 7919) % 16000));
  }
  const out = new Float64Array(n);
  for (const t of talkers) for (let i = 0; i < n; i++) out[i] += t[i % t.length];
  const level = rms(out) || 1;
  return out.map((v) => v / level);
}

const babbleCache = new Map<number, Float64Array>();
async function noiseOf(kind: Kind, n: number, seed: number): Promise<Float64Array> {
  if (kind !== "babble") return noise(kind, n, seed);
  const long = babbleCache.get(0) ?? await babble(16000 * 60);
  babbleCache.set(0, long);
  const from = (seed * 16000 * 3) % (long.length - n);
  return long.subarray(from, from + n);
}

interface Turn {
  text: string;
  /** Where the VAD put the end of the caller's speech (its last pause, no resume after), ms. */
  vadEndMs?: number;
}

/** One turn through a fresh CallerAudio with the call's real VAD and pocketsphinx. */
async function turn(
  pcm: Int16Array,
  router: RecognitionRouter,
  suppression: NoiseSuppression,
): Promise<Turn> {
  const vad = await VoiceActivity.create();
  // The VAD's own events, as CallerAudio gets them.
  const push = vad.push.bind(vad);
  const result: Turn = { text: "" };
  vad.push = (pcm) =>
    push(pcm).then((events) => {
      for (const e of events) {
        if (e.type === "pause") result.vadEndMs = e.silenceStartMs;
        else if (e.type === "resume" || e.type === "speech_start") result.vadEndMs = undefined;
      }
      return events;
    });
  let done = false;
  const noop = () => {};
  const hooks: CallerHooks = {
    onSpeechStarted: noop,
    onSpeechStopped: noop,
    onInterimText: noop,
    onFinalText: noop,
    onActivity: noop,
    onFloorChanged: noop,
    onUserTurn: (_id, text) => {
      result.text += (result.text ? " " : "") + text;
      done = true;
    },
    onUserIdle: noop,
    pauseBot: noop,
    resumeBot: noop,
    interruptBot: noop,
    cancelTurn: noop,
    onRecognitionFailed: () => done = true,
    onVadFailed: () => done = true,
  };
  // Recognition runs on its own threads while the audio here goes faster than real time: each
  // push waits for a final text asked for, as if recognition kept pace with the caller (in a
  // call it lags by ~0.1 s), so the turn machine's audio clock does not run ahead of the words.
  let finalsPending = 0;
  const turnLog = new TurnLog();
  const record: UtteranceRecord = {
    utteranceStarted: (now, ago) => turnLog.utteranceStarted(now, ago),
    utteranceMark: (name, now) => {
      if (name === "final_requested") finalsPending++;
      if (name === "final_text") finalsPending--;
      turnLog.utteranceMark(name, now);
    },
    utteranceRecognisedBy: (engine) => turnLog.utteranceRecognisedBy(engine),
    utteranceSent: (id, text, now) => turnLog.utteranceSent(id, text, now),
    utteranceDropped: () => turnLog.utteranceDropped(),
    typedSent: (id, text, now) => turnLog.typedSent(id, text, now),
  };
  const caller = new CallerAudio({
    vad,
    recognition: await router.open(EN),
    openRecognition: (l) => router.open(l),
    language: EN,
    noiseSuppression: suppression,
    hooks,
    record,
    log: { add: noop },
  });
  for (let i = 0; i < pcm.length; i += FRAME) {
    await caller.push(pcm.subarray(i, i + FRAME));
    const until = Date.now() + 5000;
    while (finalsPending > 0 && Date.now() < until) await sleep(2);
  }
  // Recognition runs on its own threads: wait for the turn's words (none if it never ended).
  const end = Date.now() + 5000;
  while (!done && Date.now() < end) {
    await sleep(10);
  }
  caller.close();
  return result;
}

interface Row {
  wer: number;
  endErrors: number[];
  unended: number;
}

async function condition(
  kind: Kind | "clean",
  snr: number,
  suppression: NoiseSuppression,
  router: RecognitionRouter,
): Promise<Row> {
  let errors = 0, words = 0, unended = 0;
  const endErrors: number[] = [];
  for (let s = 0; s < SENTENCES; s++) {
    const script = TURNS[s % TURNS.length];
    const speech = await speech16k(script);
    const { onsetMs, offsetMs } = speechBounds(speech);
    const clean = concat(silence(LEAD_MS), speech, silence(TAIL_MS));
    let pcm = clean;
    if (kind !== "clean") {
      const ref = rms(speech, onsetMs * 16, offsetMs * 16);
      const gain = ref * 10 ** (-snr / 20);
      const n = await noiseOf(kind, clean.length, s + 1);
      pcm = Int16Array.from(
        clean,
        (v, i) => Math.max(-32768, Math.min(32767, Math.round(v + n[i] * gain))),
      );
    }
    // Then the room falls quiet, so a turn the noise kept open ends and its words are counted.
    pcm = concat(pcm, silence(QUIET_MS));
    const t = await turn(pcm, router, suppression);
    const c = werCount(script, t.text);
    if (VERBOSE) console.error(`${kind} ${snr} ${suppression}: "${script}" → "${t.text}"`);
    errors += c.errors;
    words += c.words;
    const error = t.vadEndMs === undefined ? Infinity : t.vadEndMs - (LEAD_MS + offsetMs);
    // Ended only once the noise stopped: the noise held the turn open.
    if (error > TAIL_MS - 500) unended++;
    else endErrors.push(error);
  }
  return { wer: errors / words, endErrors, unended };
}

const pct = (x: number) => `${(100 * x).toFixed(1)} %`;
const ends = (r: Row) =>
  r.endErrors.length
    ? `${median(r.endErrors).toFixed(0)} / ${Math.max(...r.endErrors).toFixed(0)}`
    : "-";

async function werTable() {
  const engine = await PocketsphinxEngine.create();
  const router = new RecognitionRouter([engine], {});
  console.log(`## 1. WER and end of speech, ${SENTENCES} festival turns per row\n`);
  console.log(
    "| noise | SNR dB | WER off | WER rnnoise | VAD end error ms (median / worst) off | rnnoise | held open by the noise off | rnnoise |",
  );
  console.log("|---|---|---|---|---|---|---|---|");
  const conditions: [Kind | "clean", number][] = [["clean", Infinity]];
  for (const k of KINDS) for (const snr of SNRS) conditions.push([k, snr]);
  for (const [kind, snr] of conditions) {
    const off = await condition(kind, snr, "off", router);
    const on = await condition(kind, snr, "rnnoise", router);
    console.log(
      `| ${kind} | ${kind === "clean" ? "-" : snr} | ${pct(off.wer)} | ${pct(on.wer)} | ${
        ends(off)
      } | ${ends(on)} | ${off.unended} | ${on.unended} |`,
    );
  }
  await engine.close();
}

/** CPU ms (user+system, this process, one thread busy) per second of audio for `work`. */
const cpuPerSecond = (seconds: number, work: () => void) => cpuMsOf(work) / seconds;

function cpuTable() {
  const seconds = 60;
  const n = noise("pink", 16000 * seconds, 3);
  const pcm = Int16Array.from(n, (v) => Math.round(v * 1000));
  const frames = (f: (x: Int16Array) => void) => () => {
    for (let i = 0; i < pcm.length; i += FRAME) f(pcm.subarray(i, i + FRAME));
  };
  // Warm up the WASM code paths once.
  const warm = new NoiseSuppressor();
  frames((x) => warm.process(x))();
  warm.close();
  const ns = new NoiseSuppressor();
  const stage = cpuPerSecond(seconds, frames((x) => ns.process(x)));
  ns.close();
  const up = new Resampler(16000, 48000), down = new Resampler(48000, 16000);
  const resample = cpuPerSecond(seconds, frames((x) => down.process(up.process(x))));
  up.close();
  down.close();
  // The other place it could sit: decode the caller's Opus at 48 kHz (RNNoise's rate), denoise,
  // and downsample once for the VAD; against today's decode at 16 kHz.
  const enc = new OpusEncoder({ sampleRate: 16000 });
  const packets: Uint8Array[] = [];
  for (let i = 0; i + FRAME <= pcm.length; i += FRAME) {
    packets.push(enc.encode(pcm.subarray(i, i + FRAME)).slice());
  }
  enc.close();
  const d16 = new OpusDecoder({ sampleRate: 16000 });
  const dec16 = cpuPerSecond(seconds, () => packets.forEach((p) => d16.decode(p)));
  d16.close();
  const d48 = new OpusDecoder({ sampleRate: 48000 });
  const down48 = new Resampler(48000, 16000);
  const dec48 = cpuPerSecond(seconds, () => packets.forEach((p) => down48.process(d48.decode(p))));
  d48.close();
  down48.close();
  console.log(`\n## 2. CPU per call-second (ms), ${seconds} s of audio in 20 ms frames\n`);
  console.log("| part | ms per call-second |\n|---|---|");
  console.log(`| the stage (16→48 kHz, RNNoise, 48→16 kHz) | ${stage.toFixed(2)} |`);
  console.log(`| of which the two resampler passes | ${resample.toFixed(2)} |`);
  console.log(`| Opus decode at 16 kHz (today) | ${dec16.toFixed(2)} |`);
  console.log(
    `| Opus decode at 48 kHz + 48→16 kHz for the VAD (the alternative) | ${dec48.toFixed(2)} |`,
  );
}

if (!Deno.args.includes("--cpu-only")) await werTable();
cpuTable();
