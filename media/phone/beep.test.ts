// The beep detector on tones made here: a steady tone is found with its start and end to a frame,
// one too short or below the band is not, and a wavering tone (a voice's harmonic, in effect)
// fails the fine check though each of its 20 ms frames looks pure.
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { type Beep, BeepDetector, type BeepOptions } from "./beep.ts";
import { rng } from "../../bench/amd/labelled_set.ts";

const RATE = 8000;

/**
 * Silence, a tone from startMs for ms at hz (wavering ±vibratoHz five times a second when given),
 * silence; faint white noise throughout.
 */
function signal(
  startMs: number,
  ms: number,
  hz: number,
  vibratoHz = 0,
  totalMs = 1500,
): Int16Array {
  const out = new Int16Array((totalMs * RATE) / 1000);
  const r = rng(7);
  const a = (startMs * RATE) / 1000, n = (ms * RATE) / 1000;
  let phase = 0;
  for (let i = 0; i < out.length; i++) {
    let s = (r() - 0.5) * 200; // white noise, ~-50 dBFS
    if (i >= a && i < a + n) {
      const f = hz + vibratoHz * Math.sin((2 * Math.PI * 5 * (i - a)) / RATE);
      phase += (2 * Math.PI * f) / RATE;
      s += 8000 * Math.sin(phase);
    }
    out[i] = Math.round(s);
  }
  return out;
}

function beeps(pcm: Int16Array, options: BeepOptions = {}): Beep[] {
  const d = new BeepDetector(RATE, options);
  const out: Beep[] = [];
  for (let o = 0; o + 160 <= pcm.length; o += 160) {
    const b = d.push(pcm.subarray(o, o + 160));
    if (b) out.push(b);
  }
  return out;
}

Deno.test("a steady tone between filters is one beep, its start and end within a frame", () => {
  // 1013 Hz falls between the bank's 1000 and 1025 Hz filters; the tone starts mid-frame.
  const found = beeps(signal(510, 300, 1013));
  assertEquals(found.length, 1);
  const [b] = found;
  assert(Math.abs(b.startMs - 510) <= 20, `start ${b.startMs}`);
  assert(Math.abs(b.endMs - 810) <= 20, `end ${b.endMs}`);
  assert(Math.abs(b.hz - 1013) <= 25, `hz ${b.hz}`);
});

Deno.test("a tone shorter than minMs is not a beep; one at the band's edges is", () => {
  assertEquals(beeps(signal(500, 100, 1000)).length, 0);
  assertEquals(beeps(signal(500, 200, 440)).length, 1);
  assertEquals(beeps(signal(500, 200, 1950)).length, 1);
  // Below the band: the dial tone's 350 Hz half, say.
  assertEquals(beeps(signal(500, 400, 350)).length, 0);
});

Deno.test("a wavering tone fails the fine check though each frame looks pure", () => {
  // ±5 Hz five times a second, as a held vowel's harmonic wavers: every 20 ms frame passes the
  // bank (without the fine check it is a beep), the 120 ms window sees it smeared.
  const wavering = signal(500, 300, 450, 5);
  assertEquals(beeps(wavering, { finePurity: 0 }).length, 1);
  assertEquals(beeps(wavering).length, 0);
});
