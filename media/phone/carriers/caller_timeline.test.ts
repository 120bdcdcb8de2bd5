import { assertEquals } from "../../../tests/helpers/assert.ts";
import { CallerTimeline, FRAME_8K, MAX_CONCEALED_MS } from "./caller_timeline.ts";

const ramp = (start: number, n: number) => Int16Array.from({ length: n }, (_, i) => start + i);

Deno.test("chunks of any size come out as 20 ms frames, every sample once and in order", () => {
  const frames: Int16Array[] = [];
  const t = new CallerTimeline((f) => frames.push(f));
  let next = 0;
  for (const n of [160, 37, 283, 800, 1, 159, 480]) {
    t.push(ramp(next, n));
    next += n;
  }
  assertEquals(frames.length, Math.floor(next / FRAME_8K));
  const joined = frames.flatMap((f) => [...f]);
  assertEquals(joined, [...ramp(0, joined.length)]);
  assertEquals(t.concealedFrames, 0);
});

Deno.test("a chunk missing by its timestamps is filled with silence of its length", () => {
  const frames: Int16Array[] = [];
  const t = new CallerTimeline((f) => frames.push(f));
  t.push(ramp(1, 160), 1000);
  t.push(ramp(1, 160), 1020);
  // 1040 and 1060 never came.
  t.push(ramp(1, 160), 1080);
  assertEquals(frames.length, 5);
  assertEquals(t.concealedFrames, 2);
  assertEquals(frames[2].every((s) => s === 0), true);
  assertEquals(frames[3].every((s) => s === 0), true);
  assertEquals(frames[4][0], 1);
});

Deno.test("jitter in the stamps, and stamps that jump too far, conceal nothing", () => {
  const frames: Int16Array[] = [];
  const t = new CallerTimeline((f) => frames.push(f));
  t.push(ramp(1, 160), 0);
  t.push(ramp(1, 160), 35); // 15 ms late: jitter
  t.push(ramp(1, 160), 38); // early again
  t.push(ramp(1, 160), 60 + MAX_CONCEALED_MS + 500); // a reset clock, not a gap
  assertEquals(t.concealedFrames, 0);
  assertEquals(frames.length, 4);
});

Deno.test("at 16 kHz frames are 320 samples and a missing 40 ms is two frames of silence", () => {
  const frames: Int16Array[] = [];
  const t = new CallerTimeline((f) => frames.push(f), 16000);
  t.push(ramp(1, 320), 1000);
  t.push(ramp(1, 320), 1020);
  // 1040 and 1060 never came.
  t.push(ramp(1, 480), 1080);
  assertEquals(frames.map((f) => f.length), [320, 320, 320, 320, 320]);
  assertEquals(t.concealedFrames, 2);
  assertEquals(frames[2].every((s) => s === 0), true);
  assertEquals(frames[4][0], 1);
});
