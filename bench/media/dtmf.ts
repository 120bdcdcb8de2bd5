// In-band DTMF (media/phone/dtmf_tones.ts): how many keys sent as tones are heard, how many false
// keys the project's own speech raises (talk-off), how much speech the muting takes, and the CPU.
// Run: deno task bench dtmf   [BENCH_DTMF_ROUNDS=4]
//
// Everything goes through μ-law and the worker's phone edge (tests/helpers/phone_speech.ts), as a
// phone call hears it, frame by frame into the detector a call runs.
//  - detection: the 16 keys, ROUNDS times each in random order, tones and pauses of 40-120 ms, at
//    -5, -15, -25 and -30 dBm0 per tone, in no noise and in white noise 20 and 10 dB under the
//    tones: keys heard right, missed, and wrong or extra.
//  - talk-off: every sentence of tests/helpers/test_speech.ts (50) spoken by festival and by
//    espeak-ng, at their level and 10 dB louder, with the line's noise floor: false keys per
//    minute of speech, and the share of speech frames silenced as tone-like.
//  - CPU: detector time per minute of audio, against a baseline loop that only copies and halves
//    the rate of the same frames.
// Baseline for talk-off: the same receiver with only its level and twist rules
// (`rules: "level_twist"`), which shows what the purity and frequency rules of Q.24 buy.
import { DtmfTones } from "../../media/phone/dtmf_tones.ts";
import { dtmfTone, withNoise } from "../../tests/helpers/dtmf_audio.ts";
import { lineNoise, throughPhone } from "../../tests/helpers/phone_speech.ts";
import { DEV_SCRIPTS, HELD_SCRIPTS, SCRIPTS } from "../../tests/helpers/test_speech.ts";
import { callerSpeechWav, speechWav } from "../../tests/helpers/audio.ts";
import { readWav } from "../../caller/wav.ts";

const ROUNDS = Number(Deno.env.get("BENCH_DTMF_ROUNDS") ?? 4);
const KEYS = "0123456789*#ABCD";

let seed = 12345;
const random = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32;

function concat(parts: Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) out.set(p, at), (at += p.length);
  return out;
}

/** 16 kHz frames into a detector: the keys, frames silenced, and the detector's time in ms. */
function run(pcm16k: Int16Array, rules: "q24" | "level_twist" = "q24") {
  let keys = "";
  const tones = new DtmfTones((d) => (keys += d.digit), rules);
  const frame = new Int16Array(320);
  const started = performance.now();
  for (let at = 0; at + 320 <= pcm16k.length; at += 320) {
    frame.set(pcm16k.subarray(at, at + 320));
    tones.hear(frame);
  }
  tones.close();
  return {
    keys,
    muted: tones.stats.mutedFrames,
    frames: tones.stats.frames,
    ms: performance.now() - started,
  };
}

/** Edit distance pieces between what was sent and heard: right, missed, wrong or extra. */
function score(sent: string, heard: string) {
  const d = Array.from({ length: sent.length + 1 }, (_, i) => [i, ...Array(heard.length).fill(0)]);
  for (let j = 1; j <= heard.length; j++) d[0][j] = j;
  for (let i = 1; i <= sent.length; i++) {
    for (let j = 1; j <= heard.length; j++) {
      d[i][j] = Math.min(
        d[i - 1][j] + 1,
        d[i][j - 1] + 1,
        d[i - 1][j - 1] + (sent[i - 1] === heard[j - 1] ? 0 : 1),
      );
    }
  }
  // Missed = sent minus matched; extra = heard minus matched; matched from the LCS.
  const l = Array.from({ length: sent.length + 1 }, () => Array(heard.length + 1).fill(0));
  for (let i = 1; i <= sent.length; i++) {
    for (let j = 1; j <= heard.length; j++) {
      l[i][j] = sent[i - 1] === heard[j - 1]
        ? l[i - 1][j - 1] + 1
        : Math.max(l[i - 1][j], l[i][j - 1]);
    }
  }
  const right = l[sent.length][heard.length];
  return {
    right,
    missed: sent.length - right,
    extra: heard.length - right,
    distance: d[sent.length][heard.length],
  };
}

console.log("detection: 16 keys x", ROUNDS, "rounds, tones and pauses 40-120 ms, through G.711");
console.log("level dBm0 | noise | sent | heard right | missed | wrong or extra");
for (const dbm0 of [-5, -15, -25, -30]) {
  for (const snr of [Infinity, 20, 10]) {
    let sent = "";
    const parts: Int16Array[] = [new Int16Array(800)];
    for (let r = 0; r < ROUNDS; r++) {
      for (const k of [...KEYS].sort(() => random() - 0.5)) {
        sent += k;
        parts.push(dtmfTone(k, 40 + Math.round(random() * 80), { dbm0 }));
        parts.push(new Int16Array((40 + Math.round(random() * 80)) * 8));
      }
    }
    let pcm = concat(parts);
    // Noise RMS against one tone's RMS: the pair is 3 dB over each tone.
    if (snr !== Infinity) pcm = withNoise(pcm, dbm0 + 3 - snr, 7);
    const s = score(sent, run(throughPhone(pcm)).keys);
    const noise = snr === Infinity ? "none" : `${snr} dB under`;
    console.log(`${dbm0} | ${noise} | ${sent.length} | ${s.right} | ${s.missed} | ${s.extra}`);
  }
}

console.log("\ntalk-off: 50 sentences, festival and espeak-ng, through G.711 with a noise floor");
console.log(
  "voice | gain | minutes | false keys (Q.24 rules) | per minute | speech frames muted | baseline false keys (level and twist only) | per minute",
);
const sentences = [...SCRIPTS, ...DEV_SCRIPTS, ...HELD_SCRIPTS];
let speechMs = 0, speechFrames = 0, detectorMs = 0;
for (const voice of ["festival", "espeak-ng"]) {
  const pcms: Int16Array[] = [];
  for (const text of sentences) {
    const wav = voice === "festival"
      ? await callerSpeechWav(text, 0.3, 8000)
      : await speechWav(text, 0.3, 8000);
    pcms.push((await readWav(wav)).samples);
  }
  for (const gainDb of [0, 10]) {
    const g = 10 ** (gainDb / 20);
    const pcm8k = lineNoise(
      concat(pcms).map((x) => Math.max(-32768, Math.min(32767, Math.round(x * g)))),
      3,
    );
    const audio = throughPhone(pcm8k);
    const minutes = audio.length / 16000 / 60;
    const q = run(audio), b = run(audio, "level_twist");
    // Speech frames: frames above -45 dBFS RMS, of which the muted share.
    let loud = 0;
    for (let at = 0; at + 320 <= audio.length; at += 320) {
      let e = 0;
      for (let i = at; i < at + 320; i++) e += audio[i] * audio[i];
      if (Math.sqrt(e / 320) > 32768 * 10 ** (-45 / 20)) loud++;
    }
    speechMs += minutes * 60_000;
    speechFrames += q.frames;
    detectorMs += q.ms;
    console.log(
      `${voice} | +${gainDb} dB | ${minutes.toFixed(2)} | ${q.keys.length} | ${
        (q.keys.length / minutes).toFixed(2)
      } | ` +
        `${(100 * q.muted / Math.max(1, loud)).toFixed(2)}% of ${loud} | ${b.keys.length} | ${
          (b.keys.length / minutes).toFixed(2)
        }`,
    );
  }
}

console.log(
  "\nCPU: the detector against a copy-and-halve baseline, on a minute of noise and on the speech",
);
const all = throughPhone(
  lineNoise(new Int16Array(60 * 8000).map(() => Math.round((random() - 0.5) * 2000)), 5),
);
const frame = new Int16Array(320), half = new Float32Array(160);
let started = performance.now();
for (let at = 0; at + 320 <= all.length; at += 320) {
  frame.set(all.subarray(at, at + 320));
  for (let i = 0; i < 160; i++) half[i] = (frame[2 * i] + frame[2 * i + 1]) / 2;
}
const baselineMs = performance.now() - started;
started = performance.now();
const noiseRun = run(all);
console.log(`baseline (copy and halve): ${baselineMs.toFixed(1)} ms per minute of audio`);
console.log(
  `detector, noise: ${noiseRun.ms.toFixed(1)} ms per minute of audio (${
    (noiseRun.ms / 600).toFixed(3)
  }% of one core)`,
);
console.log(
  `detector, speech: ${(detectorMs / (speechMs / 60_000)).toFixed(1)} ms per minute of audio over ${
    (speechMs / 60_000).toFixed(1)
  } min (${speechFrames} frames)`,
);
