// The turn-taking bench's key is exact by construction: phrases land where the key says, the
// silences between them are the pauses chosen, and the phone band keeps the clip's timeline.
import { assert, assertEquals, assertMatch, assertThrows } from "../../tests/helpers/assert.ts";
import { assemble, phoneBand, RATE, speak } from "./data.ts";

const tone = (ms: number, amplitude = 8000) =>
  Int16Array.from(
    { length: (ms * RATE) / 1000 },
    (_, i) => Math.round(amplitude * Math.sin((2 * Math.PI * 440 * i) / RATE)) || 1,
  );
const at = (ms: number) => Math.round((ms * RATE) / 1000);
const loud = (pcm: Int16Array, fromMs: number, toMs: number) =>
  pcm.subarray(at(fromMs), at(toMs)).some((s) => Math.abs(s) > 1000);

Deno.test("the key marks each phrase where it was placed and the turn's end at the last one's end", () => {
  const { pcm, key } = assemble(
    [{ text: "I need milk", pcm: tone(100) }, { text: "and bread", pcm: tone(200) }],
    [600],
    300,
    2600,
  );
  assertEquals(key.segments, [
    { text: "I need milk", startMs: 300, endMs: 400 },
    { text: "and bread", startMs: 1000, endMs: 1200 },
  ]);
  assertEquals(key.endMs, 1200);
  assertEquals(key.pausesMs, [600]);
  assertEquals(pcm.length, at(300 + 100 + 600 + 200 + 2600));
  // Silence exactly where the key says there is none, speech where it says there is.
  assert(pcm.subarray(0, at(300)).every((s) => s === 0), "lead is silent");
  assert(pcm.subarray(at(400), at(1000)).every((s) => s === 0), "the pause is silent");
  assert(pcm.subarray(at(1200)).every((s) => s === 0), "tail is silent");
  assert(pcm.subarray(at(300), at(400)).every((s) => s !== 0), "first phrase is all there");
  assert(pcm.subarray(at(1000), at(1200)).every((s) => s !== 0), "second phrase is all there");
});

Deno.test("a turn needs one pause fewer than its phrases, or it is refused", () => {
  const extra = assertThrows(() => assemble([{ text: "a", pcm: tone(100) }], [300]), Error);
  assertMatch(extra.message, /need 0 pauses/);
  assertMatch(assertThrows(() => assemble([], []), Error).message, /at least one phrase/);
});

Deno.test("the phone band keeps the clip's length and where its speech is", () => {
  const { pcm, key } = assemble([{ text: "a", pcm: tone(500) }, { text: "b", pcm: tone(300) }], [
    700,
  ]);
  const narrow = phoneBand(pcm);
  assertEquals(narrow.length, pcm.length);
  for (const s of key.segments) {
    assert(loud(narrow, s.startMs + 5, s.endMs - 5), `speech kept at ${s.startMs}`);
  }
  // μ-law, resampling and the edge's filter leave the pause quiet (a few ms of ringing at most).
  assert(
    !loud(narrow, key.segments[0].endMs + 5, key.segments[1].startMs - 5),
    "pause stays quiet",
  );
  assert(!loud(narrow, 0, key.segments[0].startMs - 5), "lead stays quiet");
});

Deno.test("a synthesised phrase is trimmed to its speech, so the key's ends are the speech's", async () => {
  // Real festival and espeak-ng (the bench's voices), cached like the bench's own phrases.
  for (
    const voice of [
      { engine: "festival" as const, name: "kal", rate: 1 },
      { engine: "espeak" as const, name: "hi", rate: 150 },
    ]
  ) {
    const pcm = await speak(voice.engine === "festival" ? "I need milk" : "मुझे दूध", voice);
    const ms = (pcm.length * 1000) / RATE;
    assert(ms > 300 && ms < 3000, `${voice.engine}: ${ms} ms`);
    // Sound within the first and last 30 ms: no synthesiser silence left to shift the key.
    const peak = (from: number, to: number) =>
      Math.max(...pcm.subarray(at(from), at(to)).map(Math.abs));
    assert(peak(0, 30) > 150, `${voice.engine} starts with sound: ${peak(0, 30)}`);
    assert(peak(ms - 30, ms) > 150, `${voice.engine} ends with sound: ${peak(ms - 30, ms)}`);
  }
});
