// The page's latency list: one line per measured turn, marked when the service found no turn for
// it, and the median of the call so far; the RMS the probe compares with its thresholds.
import assert from "node:assert/strict";
import { BOT_AUDIO_RMS, LatencyLog, rmsOf } from "./latency.ts";

const turn = (ms: number) => ({ speech_start: 0, speech_end: 1000, first_audio: 1000 + ms, ms });

Deno.test("the page lists each turn's wait and the median of the call", () => {
  const log = new LatencyLog();
  assert.equal(log.median(), null);
  log.add(turn(612.4));
  const second = log.add(turn(180));
  log.add(turn(455));
  second.recorded = false;
  assert.deepEqual(log.lines(), [
    "Turn 1: 612 ms",
    "Turn 2: 180 ms (not kept by the service: no new turn of yours was answered)",
    "Turn 3: 455 ms",
  ]);
  assert.equal(log.median(), 455);
});

Deno.test("the probe's RMS is on the same scale as the simulator's bot level", () => {
  assert.equal(rmsOf(new Float32Array(512)), 0);
  const square = Float32Array.from({ length: 512 }, (_, i) => (i % 2 ? 0.5 : -0.5));
  assert.equal(rmsOf(square), 0.5);
  // 300 on the 16-bit scale, as caller/turn_latency.ts's BOT_LEVEL.
  assert.equal(Math.round(BOT_AUDIO_RMS * 32768), 300);
});
