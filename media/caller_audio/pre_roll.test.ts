// The caller's recent audio, as the recogniser gets it at an onset.
import { assertEquals } from "../../tests/helpers/assert.ts";
import { PreRoll } from "./pre_roll.ts";

/** 16 kHz samples numbered from `from` (wrapping at 32768), `ms` long. */
const ramp = (from: number, ms: number) =>
  Int16Array.from({ length: ms * 16 }, (_, i) => (from + i) % 32768);

Deno.test("the pre-roll gives back exactly the audio since an audio time, across the ring's wrap", () => {
  const roll = new PreRoll(100);
  for (let ms = 0; ms < 500; ms += 20) roll.push(ramp(ms * 16, 20)); // 500 ms in 20 ms frames
  assertEquals(roll.pushedMs, 500);
  assertEquals(roll.since(430), ramp(430 * 16, 70));
  assertEquals(roll.since(500), new Int16Array(0));
});

Deno.test("the pre-roll reaches back only as far as it keeps, and a pushed buffer may be reused", () => {
  const roll = new PreRoll(100);
  const frame = new Int16Array(320);
  for (let ms = 0; ms < 300; ms += 20) {
    frame.set(ramp(ms * 16, 20));
    roll.push(frame);
  }
  frame.fill(0); // the caller's decoder reuses its buffer
  assertEquals(roll.since(0), ramp(200 * 16, 100));
  // A push longer than the ring keeps its end.
  roll.push(ramp(300 * 16, 250));
  assertEquals(roll.since(0), ramp(450 * 16, 100));
});
