// The page's latency list: one line per turn, spoken or typed, named by its words, marked when
// the service found no turn for it, and the median of the call so far; the RMS the probe compares with its thresholds.
import assert from "node:assert/strict";
import { BOT_AUDIO_RMS, LatencyLog, rmsOf } from "./latency.ts";

const turn = (ms: number) => ({ speech_start: 0, speech_end: 1000, first_audio: 1000 + ms, ms });

Deno.test("the page lists each turn by its words, typed ones too, and the median", () => {
  const log = new LatencyLog();
  assert.equal(log.median(), null);
  log.spoken(turn(612.4), "what is the weather like");
  const second = log.spoken(turn(180), "");
  log.typed({ text: "opening hours", ms: 455 });
  log.typed({ text: "stop", ms: null, why: "sent over the bot" });
  second.recorded = false;
  assert.deepEqual(log.lines(), [
    '"what is the weather like": 612 ms',
    "(words not recognised): 180 ms (not kept by the service: no new turn of yours was answered)",
    '"opening hours" (typed): 455 ms',
    '"stop" (typed): not measured (sent over the bot)',
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
