import assert from "node:assert/strict";
import { LatenessHistogram, Pacer, type PacerTick } from "./pacer.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function block(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) { /* stall the event loop on purpose */ }
}

interface Seen {
  frame: number;
  scheduledAt: number;
  at: number;
}

function gaps(seen: Seen[]): number[] {
  return seen.slice(1).map((s, i) => s.at - seen[i].at);
}

Deno.test("ticks on a drift-free 20 ms grid: each deadline is start + n × 20 ms", async () => {
  const seen: Seen[] = [];
  const pacer = new Pacer((t) => seen.push({ ...t, at: performance.now() }), {
    recordJitter: true,
  });
  pacer.start();
  await sleep(1010);
  pacer.stop();
  // At most frames 0..50 are due within 1010 ms; a loaded machine may skip some (that is the
  // stall tests' business), never add any. Lateness figures belong to the bench, not here.
  assert.ok(seen.length >= 20 && seen.length <= 51, `ticks ${seen.length}`);
  const t0 = seen[0].scheduledAt;
  seen.forEach((s, i) => {
    if (i > 0) assert.ok(s.frame > seen[i - 1].frame, "frames only move forward");
    assert.ok(Math.abs(s.scheduledAt - t0 - s.frame * 20) < 1e-6, "deadline is start + n*20");
    assert.ok(s.at >= s.scheduledAt - 1, "no tick runs before its deadline");
  });
  const stats = pacer.stats();
  assert.equal(stats.ticks, seen.length);
  assert.equal(stats.ticks + stats.skipped, seen.at(-1)!.frame + 1);
});

Deno.test("after a long event-loop stall it skips the missed frames instead of bursting", async () => {
  const seen: Seen[] = [];
  const pacer = new Pacer((t: PacerTick) => {
    seen.push({ ...t, at: performance.now() });
    if (t.frame === 5) block(200);
  });
  pacer.start();
  await sleep(600);
  pacer.stop();
  // 200 ms is 10 frames: more than maxLagFrames (3), so they are skipped.
  assert.ok(pacer.skipped >= 8 && pacer.skipped <= 11, `skipped ${pacer.skipped}`);
  const minGap = Math.min(...gaps(seen));
  assert.ok(minGap >= 4, `closest ticks ${minGap.toFixed(2)} ms apart`);
  const jump = seen.findIndex((s, i) => i > 0 && s.frame - seen[i - 1].frame > 1);
  assert.ok(jump > 0, "a frame jump marks the resync");
  // Back on the grid: every tick after the resync is on time (within one frame).
  for (const s of seen.slice(jump)) {
    assert.ok(s.at - s.scheduledAt < 20, `frame ${s.frame} late by ${s.at - s.scheduledAt}`);
  }
  // Ticks run = frames due minus frames skipped.
  const last = seen[seen.length - 1].frame;
  assert.equal(seen.length, last + 1 - pacer.skipped);
});

Deno.test("a short stall is caught up frame by frame with gaps, not skipped", async () => {
  const seen: Seen[] = [];
  const pacer = new Pacer((t) => {
    seen.push({ ...t, at: performance.now() });
    if (t.frame === 3) block(50);
    // A generous skip threshold: what is pinned is catching up with gaps, and a loaded CI
    // machine can add its own lateness on top of the 50 ms block.
  }, { maxLagFrames: 20 });
  pacer.start();
  await sleep(400);
  pacer.stop();
  assert.equal(pacer.skipped, 0);
  seen.forEach((s, i) => assert.equal(s.frame, i));
  const minGap = Math.min(...gaps(seen));
  assert.ok(minGap >= 4, `closest ticks ${minGap.toFixed(2)} ms apart`);
  const tail = seen.slice(-5);
  for (const s of tail) assert.ok(s.at - s.scheduledAt < 10, "caught up by the end");
});

Deno.test("a throwing tick is reported and the pacer keeps going; stop() inside tick stops it", async () => {
  const errors: unknown[] = [];
  let count = 0;
  const pacer = new Pacer(() => {
    count++;
    if (count === 2) throw new Error("boom");
    if (count === 4) pacer.stop();
  }, { onError: (e) => errors.push(e) });
  pacer.start();
  await sleep(150);
  assert.equal(count, 4);
  assert.equal(errors.length, 1);
  assert.equal(pacer.running, false);
});

Deno.test("lateness histogram: quantiles within one bucket, overflow, negatives, merge, reset", () => {
  const h = new LatenessHistogram(0.25, 100);
  assert.equal(h.counts.length, 401, "400 buckets and one overflow, whatever the sample count");
  assert.equal(h.quantile(0.99), 0, "empty");
  // 1000 samples 0.00, 0.01, ... 9.99 ms: exact p50 is 5.00, exact p99 is 9.90.
  const samples = Array.from({ length: 1000 }, (_, i) => i / 100);
  for (const x of samples) h.add(x);
  assert.equal(h.count, 1000);
  const p50 = h.quantile(0.5), p99 = h.quantile(0.99);
  assert.ok(p50 >= 5 && p50 <= 5.25, `p50 ${p50}`);
  assert.ok(p99 >= 9.9 && p99 <= 9.99, `p99 ${p99} (capped at the max seen)`);
  assert.equal(h.maxLateMs, 9.99);
  assert.ok(Math.abs(h.sumMs / h.count - 4.995) < 1e-9);

  h.add(-0.2); // a timer a little early counts as on time
  assert.equal(h.counts[0], 26);
  h.add(250); // beyond the range: the overflow bucket, and the max is kept exactly
  assert.equal(h.counts[400], 1);
  assert.equal(h.quantile(1), 250);

  const other = new LatenessHistogram();
  for (let i = 0; i < 1002; i++) other.add(50);
  h.merge(other);
  assert.equal(h.count, 2004);
  assert.ok(h.quantile(0.9) >= 50 && h.quantile(0.9) <= 50.25, `merged p90 ${h.quantile(0.9)}`);
  assert.throws(() => h.merge(new LatenessHistogram(1, 100)));

  h.reset();
  assert.equal(h.count, 0);
  assert.equal(h.maxLateMs, 0);
  assert.equal(h.counts.reduce((a, b) => a + b, 0), 0);
});

Deno.test("without recordJitter the pacer's stats come from its histogram, one count per tick", async () => {
  const pacer = new Pacer(() => {});
  pacer.start();
  await sleep(200);
  pacer.stop();
  const stats = pacer.stats();
  assert.equal(pacer.jitter.length, 0, "no per-tick samples kept");
  assert.ok(stats.histogram, "histogram on by default");
  assert.equal(stats.histogram.count, stats.ticks);
  assert.ok(stats.ticks > 0);
  assert.ok(stats.p50LateMs <= stats.p99LateMs && stats.p99LateMs <= stats.maxLateMs);
  assert.equal(new Pacer(() => {}, { histogram: false }).stats().histogram, undefined);
});

Deno.test("lateness histogram counts below an edge, as Prometheus buckets need them", () => {
  const h = new LatenessHistogram(0.25, 100);
  for (const ms of [-0.1, 0.1, 0.9, 1, 1.2, 4.99, 5, 19.9, 99.9, 150]) h.add(ms);
  assert.equal(h.countBelow(0), 0);
  assert.equal(h.countBelow(1), 3, "[0,1): -0.1 (on time), 0.1, 0.9");
  assert.equal(h.countBelow(5), 6, "and 1, 1.2, 4.99");
  assert.equal(h.countBelow(20), 8, "and 5, 19.9");
  assert.equal(h.countBelow(100), 9, "everything but the overflow");
  assert.equal(h.countBelow(1000), 9, "the overflow bucket has no upper edge");
});
