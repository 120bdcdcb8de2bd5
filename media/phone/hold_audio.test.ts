import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { HOLD_NOTES_HZ, HoldAudio } from "./hold_audio.ts";
import { RelaySource } from "./relay_source.ts";

/** Goertzel power of `hz` in `pcm` at 48 kHz. */
function power(pcm: Int16Array, hz: number): number {
  const k = 2 * Math.cos(2 * Math.PI * hz / 48_000);
  let s1 = 0, s2 = 0;
  for (const x of pcm) [s1, s2] = [x + k * s1 - s2, s1];
  return s1 * s1 + s2 * s2 - k * s1 * s2;
}

Deno.test("hold audio is a soft chime of its two notes with quiet between, repeating every 2 s", () => {
  const hold = new HoldAudio();
  const frames = Array.from({ length: 200 }, () => hold.next().slice());
  const peak = Math.max(...frames.map((f) => Math.max(...f.map(Math.abs))));
  assert(peak > 1000 && peak < 4000, `peak ${peak}`);
  // Frame 5 (100 ms) is in the first note, frame 30 in the second, frame 60 in the quiet.
  assert(power(frames[5], HOLD_NOTES_HZ[0]) > 10 * power(frames[5], HOLD_NOTES_HZ[1]));
  assert(power(frames[30], HOLD_NOTES_HZ[1]) > 10 * power(frames[30], HOLD_NOTES_HZ[0]));
  assertEquals(Math.max(...frames[60].map(Math.abs)), 0);
  assertEquals(frames[105], frames[5]);
});

Deno.test("a relay plays one leg's frames into the other at 48 kHz and never queues more than 120 ms", () => {
  const relay = new RelaySource();
  assertEquals(relay.next(), undefined);
  const tone = new Int16Array(320).map((_, i) =>
    Math.round(8000 * Math.sin(2 * Math.PI * 500 * i / 16_000))
  );
  for (let i = 0; i < 10; i++) relay.push(tone);
  assertEquals(relay.dropped, 4);
  const out: Int16Array[] = [];
  for (let f = relay.next(); f; f = relay.next()) out.push(f.slice());
  assertEquals(out.length, 6);
  assertEquals(out[0].length, 960);
  assert(power(out[3], 500) > 100 * power(out[3], 1500));
});
