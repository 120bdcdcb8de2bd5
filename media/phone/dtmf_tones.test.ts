import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import {
  dialTones,
  dtmfTone,
  type ToneOptions,
  withNoise,
} from "../../tests/helpers/dtmf_audio.ts";
import { throughPhone } from "../../tests/helpers/phone_speech.ts";
import { DtmfTones } from "./dtmf_tones.ts";
import type { DtmfDigit } from "./line.ts";

/** 8 kHz PCM through μ-law and the phone edge, frame by frame into a detector. */
function hear(pcm8k: Int16Array) {
  const digits: DtmfDigit[] = [];
  const tones = new DtmfTones((d) => digits.push(d));
  const audio = throughPhone(pcm8k);
  const out: Int16Array[] = [];
  for (let at = 0; at + 320 <= audio.length; at += 320) {
    out.push(tones.hear(audio.slice(at, at + 320)).slice());
  }
  tones.close();
  return { keys: digits.map((d) => d.digit).join(""), digits, out, tones };
}

const pad = (ms: number) => new Int16Array(ms * 8);
const join = (...parts: Int16Array[]) => {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) out.set(p, at), (at += p.length);
  return out;
};
const once = (key: string, ms: number, o: ToneOptions = {}) =>
  hear(join(pad(60), dtmfTone(key, ms, o), pad(100))).keys;

Deno.test("each of the 16 keys sent as its Q.23 pair is heard once, marked as a tone", () => {
  const keys = "123A456B789C*0#D";
  const h = hear(dialTones(keys));
  assertEquals(h.keys, keys);
  assert(h.digits.every((d) => d.via === "tone" && d.durationMs >= 70 && d.durationMs <= 100));
});

Deno.test("40 ms tones with 40 ms pauses (Q.24's shortest) are heard wherever they fall on the frames", () => {
  for (let offset = 0; offset < 20; offset += 3) {
    assertEquals(
      hear(join(pad(offset), dialTones("159#", 40, 40))).keys,
      "159#",
      `offset ${offset}`,
    );
  }
});

Deno.test("a tone of 15 ms is not a key", () => {
  for (let offset = 0; offset < 20; offset += 5) {
    assertEquals(hear(join(pad(offset), dtmfTone("5", 15), pad(100))).keys, "", `offset ${offset}`);
  }
});

Deno.test("frequencies 1.5% off are heard; 3.5% off are not (Q.24's operate and non-operate)", () => {
  for (const deviation of [-0.015, 0.015]) assertEquals(once("8", 80, { deviation }), "8");
  for (const deviation of [-0.035, 0.035]) assertEquals(once("8", 80, { deviation }), "");
});

Deno.test("twist within +4 / -8 dB is heard; beyond it is not", () => {
  for (const twistDb of [3.5, -7.5]) assertEquals(once("0", 80, { twistDb }), "0");
  for (const twistDb of [6, -11]) assertEquals(once("0", 80, { twistDb }), "");
});

Deno.test("a tone at -25 dBm0 is heard, one at -45 dBm0 is not", () => {
  assertEquals(once("*", 80, { dbm0: -25 }), "*");
  assertEquals(once("*", 80, { dbm0: -45 }), "");
});

Deno.test("keys in white noise 15 dB under the tones are each heard once", () => {
  assertEquals(hear(withNoise(dialTones("24680", 60, 60, { dbm0: -10 }), -25)).keys, "24680");
});

Deno.test("the same key twice with a 40 ms pause is two presses; a 10 ms dropout is not", () => {
  assertEquals(
    hear(join(pad(40), dtmfTone("7", 60), pad(40), dtmfTone("7", 60), pad(100))).keys,
    "77",
  );
  assertEquals(
    hear(join(pad(40), dtmfTone("7", 60), pad(10), dtmfTone("7", 60), pad(100))).keys,
    "7",
  );
});

Deno.test("the tone's frames are silenced; the frames around it are passed as they came", () => {
  const noise = withNoise(pad(200), -30, 7);
  const h = hear(join(noise, dtmfTone("3", 100), noise));
  assertEquals(h.keys, "3");
  const loud = (f: Int16Array) => f.some((x) => Math.abs(x) > 3000);
  // No frame that still carries the tone's level reaches the call.
  assertEquals(h.out.filter(loud).length, 0);
  const muted = h.out.map((f) => f.every((x) => x === 0));
  // The noise before and after is untouched but for the frames at the tone's edges.
  assertEquals(muted.slice(0, 9).filter(Boolean).length, 0);
  assertEquals(muted.slice(-8).filter(Boolean).length, 0);
  assert(
    h.tones.stats.mutedFrames >= 5 && h.tones.stats.mutedFrames <= 8,
    `${h.tones.stats.mutedFrames}`,
  );
});
