import assert from "node:assert/strict";
import { EchoSource } from "./echo.ts";

const frameOf = (v: number, n = 960) => new Int16Array(n).fill(v);

Deno.test("the echo gives back each pushed frame after the delay, in order, unchanged", () => {
  const echo = new EchoSource(100, 3000);
  const decoderBuffer = new Int16Array(960);
  const got: number[] = [];
  for (let t = 0; t < 40; t++) {
    decoderBuffer.fill(t + 1); // a decoder reuses its buffer: the echo must have copied it
    echo.push(decoderBuffer, t * 20);
    const out = echo.next(t * 20);
    if (out) {
      assert.equal(out.length, 960);
      assert.ok(out.every((s) => s === out[0]));
      got.push(out[0]);
    }
  }
  // Playback starts once 100 ms have passed since the first frame: frame 1 comes out at t = 5.
  assert.deepEqual(got, Array.from({ length: 35 }, (_, i) => i + 1));
});

Deno.test("in the steady state the echo reuses its frame arrays instead of allocating", () => {
  const echo = new EchoSource(0, 3000);
  const seen = new Set<Int16Array>();
  for (let t = 0; t < 500; t++) {
    echo.push(frameOf(t), t * 20);
    const out = echo.next(t * 20)!;
    assert.equal(out[0], t);
    seen.add(out);
  }
  // One frame in the queue and one lent to the outbound side at a time.
  assert.ok(seen.size <= 3, `${seen.size} distinct arrays for 500 frames`);
});

Deno.test("a short frame is padded with silence and a stalled reader keeps only maxQueuedMs", () => {
  const echo = new EchoSource(0, 100); // at most 5 frames queued
  echo.push(frameOf(7, 480), 0);
  const short = echo.next(0)!;
  assert.equal(short.length, 960);
  assert.deepEqual([short[0], short[479], short[480], short[959]], [7, 7, 0, 0]);
  for (let i = 0; i < 20; i++) echo.push(frameOf(i), 20);
  const out: number[] = [];
  for (let f; (f = echo.next(40));) out.push(f[0]);
  assert.deepEqual(out, [15, 16, 17, 18, 19]);
});
