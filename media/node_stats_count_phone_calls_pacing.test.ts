// The worker's /stats counts a phone call's pacing (its line's pacer) beside web calls': a node
// carrying phone calls must show its skipped frames to the operator and the benches.
import { assertEquals } from "../tests/helpers/assert.ts";
import { LatenessHistogram } from "./audio/pacer.ts";
import type { Call } from "./call/call.ts";
import { nodeStats, type WorkerContext } from "./worker.ts";

Deno.test("/stats counts a phone call's ticks, lateness and skipped frames", () => {
  const histogram = new LatenessHistogram();
  for (const ms of [0.2, 0.4, 30]) histogram.add(ms);
  const phone = { line: { pacing: { skipped: 2, histogram } } } as unknown as Call;
  const w = { nodeId: "node-1", calls: new Map([["ses_1", phone]]) } as unknown as WorkerContext;
  const stats = nodeStats(w);
  assertEquals(stats.calls, 1);
  assertEquals(stats.pacing.ticks, 3);
  assertEquals(stats.pacing.skipped_frames, 2);
  assertEquals(stats.pacing.late_ms.max, 30);
});
