// Silero v5 VAD cost per call: ms per 32 ms frame and realtime factor at 1, 10 and 50 streams
// sharing the process's one model, against a baseline that only frames and copies the audio.
// Run: deno run -A bench/media/vad.ts  [BENCH_VAD_LEVELS=1,10,50 BENCH_VAD_SECONDS=20 BENCH_VAD_ROUNDS=3]
//
// Each stream is fed 20 ms chunks (320 samples at 16 kHz, what the worker's Opus decoder gives)
// as fast as it can go: per 20 ms step, every stream pushes one chunk and the step waits for all
// of them, as one worker process with N calls would. Two signals:
//  - "noise floor": espeak-ng speech with -50 dBFS pink noise under it and between turns, so the
//    model runs on every frame (the silence gate never fires) — the worst case;
//  - "gated": the same speech with digital silence between turns (a muted or noise-suppressed
//    microphone), where frames under -60 dBFS skip the model.
// The baseline runs the same loop with a frame-and-copy stand-in for the VAD. Wall time and
// process CPU (user + system, all threads, node:process cpuUsage) are printed; nothing asserted.
// Then, for the gate on audio as the worker gets it from a browser: the same speech at 48 kHz
// over a pink-noise floor at each of BENCH_VAD_OPUS_FLOORS dBFS (default -80,-70,-65,-60,-55:
// a noise-suppressed microphone leaves a residual somewhere in there), through Opus and decoded
// at 16 kHz, one stream: the share of frames the -60 dBFS gate keeps from the model, and the cost.

import process from "node:process";
import { SILERO_FRAME_SAMPLES, sileroModel } from "../../media/vad/silero.ts";
import { VoiceActivity } from "../../media/vad/voice_activity.ts";
import { throughOpus } from "../../tests/helpers/audio.ts";
import {
  concat,
  mix,
  pinkNoise,
  silence,
  speech16k,
  speech48k,
} from "../../tests/helpers/test_signals.ts";
import { median } from "../harness/stats.ts";

const LEVELS = (Deno.env.get("BENCH_VAD_LEVELS") ?? "1,10,50").split(",").map(Number);
const SECONDS = Number(Deno.env.get("BENCH_VAD_SECONDS") ?? 20);
const ROUNDS = Number(Deno.env.get("BENCH_VAD_ROUNDS") ?? 3);
const CHUNK = 320;
const OPUS_FLOORS = (Deno.env.get("BENCH_VAD_OPUS_FLOORS") ?? "-80,-70,-65,-60,-55").split(",")
  .map(Number);

/** `seconds` of 16 kHz audio: sentences with 1.5 s gaps, looped. */
async function signal(seconds: number, noiseFloor: boolean): Promise<Int16Array> {
  const turns = await Promise.all([
    "Hello, I would like to book a table for two people tonight.",
    "Yes, around eight would be perfect, thank you.",
    "Could you tell me whether you have parking nearby?",
  ].map((t) => speech16k(t, 0)));
  const parts: Int16Array[] = [];
  let n = 0;
  for (let i = 0; n < seconds * 16000; i++) {
    const part = concat(turns[i % turns.length], silence(1500));
    parts.push(part);
    n += part.length;
  }
  const pcm = concat(...parts).subarray(0, seconds * 16000);
  return noiseFloor ? mix(pcm, pinkNoise(seconds * 1000, -50)) : pcm;
}

interface Streamer {
  push(chunk: Int16Array): Promise<unknown>;
}

/** Stand-in for the VAD with the same framing work: int16 -> float frame copy, no model. */
class CopyFrames implements Streamer {
  #frame = new Float32Array(SILERO_FRAME_SAMPLES);
  #filled = 0;
  frames = 0;
  push(chunk: Int16Array): Promise<unknown> {
    for (let i = 0; i < chunk.length; i++) {
      this.#frame[this.#filled++] = chunk[i] / 32768;
      if (this.#filled === SILERO_FRAME_SAMPLES) {
        this.#filled = 0;
        this.frames++;
      }
    }
    return Promise.resolve();
  }
}

interface Result {
  wallMs: number;
  cpuMs: number;
  frames: number;
  events: number;
}

async function drive(streams: Streamer[], pcm: Int16Array): Promise<Result> {
  // Streams start at different points of the signal, so turns do not line up across calls.
  const steps = Math.floor(pcm.length / CHUNK);
  const offset = (s: number) => ((s * 7919) % steps) * CHUNK;
  let events = 0;
  const cpu0 = process.cpuUsage(), t0 = performance.now();
  for (let step = 0; step < steps; step++) {
    const results = await Promise.all(streams.map((st, s) => {
      const at = (offset(s) + step * CHUNK) % pcm.length;
      return st.push(pcm.subarray(at, at + CHUNK));
    }));
    for (const r of results) if (Array.isArray(r)) events += r.length;
  }
  const wallMs = performance.now() - t0, cpu = process.cpuUsage(cpu0);
  const frames = streams.length * Math.floor((steps * CHUNK) / SILERO_FRAME_SAMPLES);
  return { wallMs, cpuMs: (cpu.user + cpu.system) / 1000, frames, events };
}

const fmt = (x: number, d = 3) => x.toFixed(d);

const model = await sileroModel();
const load = () => Deno.loadavg().map((x) => x.toFixed(2)).join(" ");
console.log(
  `Silero v5 VAD bench: ${SECONDS} s of audio per stream, 20 ms pushes, median of ${ROUNDS} rounds`,
);
console.log(`model ${model.path}`);
console.log(`load average before: ${load()}`);

// Raw model cost, one stream, no framing or decisions.
{
  const stream = model.stream();
  const frame = new Float32Array(SILERO_FRAME_SAMPLES);
  const pcm = await signal(10, true);
  for (let i = 0; i < 200; i++) await stream.probability(frame);
  const n = Math.floor(pcm.length / SILERO_FRAME_SAMPLES);
  const t0 = performance.now();
  for (let k = 0; k < n; k++) {
    for (let i = 0; i < SILERO_FRAME_SAMPLES; i++) {
      frame[i] = pcm[k * SILERO_FRAME_SAMPLES + i] / 32768;
    }
    await stream.probability(frame);
  }
  const ms = (performance.now() - t0) / n;
  console.log(
    `raw SileroStream.probability: ${fmt(ms)} ms per frame (${n} frames) = ${
      fmt((ms / 32) * 100, 2)
    } % of one core per call`,
  );
}

const rows: string[] = [];
for (const noiseFloor of [true, false]) {
  const pcm = await signal(SECONDS, noiseFloor);
  const label = noiseFloor ? "noise floor" : "gated";
  for (const n of LEVELS) {
    const runs: { base: Result; vad: Result; gated: number }[] = [];
    for (let round = 0; round <= ROUNDS; round++) {
      const base = await drive(Array.from({ length: n }, () => new CopyFrames()), pcm);
      let gated = 0, all = 0;
      const vads = Array.from(
        { length: n },
        () =>
          new VoiceActivity(model, {}, {
            onFrame: (f) => {
              all++;
              if (f.gated) gated++;
            },
          }),
      );
      const vad = await drive(vads, pcm);
      for (const v of vads) v.close();
      if (round > 0) runs.push({ base, vad, gated: gated / all }); // round 0 warms up
    }
    const perFrame = (r: Result, k: "wallMs" | "cpuMs") => r[k] / r.frames;
    const vadWall = median(runs.map((r) => perFrame(r.vad, "wallMs")));
    const vadCpu = median(runs.map((r) => perFrame(r.vad, "cpuMs")));
    const baseWall = median(runs.map((r) => perFrame(r.base, "wallMs")));
    const audioS = n * SECONDS;
    const rtf = audioS / (median(runs.map((r) => r.vad.wallMs)) / 1000);
    const baseRtf = audioS / (median(runs.map((r) => r.base.wallMs)) / 1000);
    rows.push(
      `| ${label.padEnd(11)} | ${String(n).padStart(7)} | ${fmt(vadWall).padStart(10)} | ${
        fmt(vadCpu).padStart(9)
      } | ${fmt(baseWall, 4).padStart(10)} | ${fmt(rtf, 0).padStart(8)}x | ${
        fmt(baseRtf, 0).padStart(9)
      }x | ${fmt(32 / vadWall, 0).padStart(12)} | ${fmt(runs[0].gated * 100, 0).padStart(6)} % | ${
        String(runs[0].vad.events).padStart(6)
      } |`,
    );
    console.log(rows.at(-1));
  }
}

console.log(`\nload average after: ${load()}`);
console.log(
  "| signal      | streams | VAD ms/frame wall | VAD ms/frame CPU | base ms/frame | VAD realtime | base realtime | streams/core | gated | events |",
);
console.log(
  "| ----------- | ------: | ---------: | --------: | ---------: | --------: | ---------: | -----------: | -------: | -----: |",
);
for (const r of rows) console.log(r);
console.log(
  "ms/frame: per 32 ms frame of one stream; realtime: seconds of audio (all streams) per wall second;",
);
console.log(
  "streams/core: 32 ms / wall ms per frame, i.e. how many calls one core could keep up with.",
);

// ---- the gate on Opus-decoded audio over a noise floor ----

/** `seconds` of 48 kHz speech turns with 1.5 s gaps over pink noise at `floorDbfs`, via Opus. */
async function opusSignal(seconds: number, floorDbfs: number): Promise<Int16Array> {
  const turns = await Promise.all([
    "Hello, I would like to book a table for two people tonight.",
    "Yes, around eight would be perfect, thank you.",
  ].map((t) => speech48k(t, 0)));
  const parts: Int16Array[] = [];
  let n = 0;
  for (let i = 0; n < seconds * 48000; i++) {
    const part = concat(turns[i % turns.length], new Int16Array(1.5 * 48000));
    parts.push(part);
    n += part.length;
  }
  const pcm = concat(...parts).subarray(0, seconds * 48000);
  // pinkNoise makes 16 samples per ms: ask for 3x the duration to get 48 kHz samples.
  return throughOpus(mix(pcm, pinkNoise(seconds * 3000, floorDbfs)));
}

console.log(
  "\nThe -60 dBFS gate on Opus-decoded speech over a noise floor (1 stream, 10 s, 1.5 s gaps):",
);
console.log("| floor dBFS | gated frames | model runs saved per s | VAD ms/frame wall | events |");
console.log("| ---------: | -----------: | ---------------------: | ----------------: | -----: |");
for (const floor of OPUS_FLOORS) {
  const pcm = await opusSignal(10, floor);
  let gated = 0, all = 0;
  const results: Result[] = [];
  for (let round = 0; round <= ROUNDS; round++) {
    gated = all = 0;
    const vad = new VoiceActivity(model, {}, {
      onFrame: (f) => {
        all++;
        if (f.gated) gated++;
      },
    });
    const r = await drive([vad], pcm);
    vad.close();
    if (round > 0) results.push(r);
  }
  const wall = median(results.map((r) => r.wallMs / r.frames));
  console.log(
    `| ${String(floor).padStart(10)} | ${fmt((gated / all) * 100, 0).padStart(10)} % | ${
      fmt((gated / all) * (1000 / 32), 1).padStart(22)
    } | ${fmt(wall).padStart(17)} | ${String(results[0].events).padStart(6)} |`,
  );
}
