import assert from "node:assert/strict";
import { escapeText, Espeak, ESPEAK_SAMPLE_RATE, EspeakError, type EspeakEvent } from "./espeak.ts";

const espeak = await Espeak.load();

function speak(text: string, voice = "en-us") {
  espeak.setVoice(voice);
  const pcm: Int16Array[] = [];
  const events: EspeakEvent[] = [];
  const result = espeak.synthesize(text, (p, e) => {
    pcm.push(p);
    events.push(...e);
  });
  const words = events.filter((e) => e.type === "word");
  return { pcm, events, words, result };
}

Deno.test("load gives one shared instance at 22,050 Hz with the Indic voices", async () => {
  assert.equal(await Espeak.load(), espeak);
  assert.equal(ESPEAK_SAMPLE_RATE, 22050);
  const langs = new Set(espeak.voices().flatMap((v) => v.languages.map((l) => l.name)));
  for (const l of ["en-us", "hi", "ta", "ur", "kok"]) assert.ok(langs.has(l), l);
});

Deno.test("English text gives audio in ~100 ms chunks and word events at each word", () => {
  const text = "Hello, how can I help you today?";
  const { pcm, words, result } = speak(text);
  assert.equal(result.stopped, false);
  assert.equal(result.samples, pcm.reduce((s, p) => s + p.length, 0));
  assert.ok(result.samples > ESPEAK_SAMPLE_RATE, "over a second of audio");
  assert.ok(pcm.length > 5 && pcm[0].length === 2206);
  assert.deepEqual(
    words.map((w) => text.slice(w.charIndex, w.charIndex + w.length)),
    ["Hello", "how", "can", "I", "help", "you", "today"],
  );
  const ms = words.map((w) => w.audioMs);
  assert.deepEqual(ms, [...ms].sort((a, b) => a - b));
  assert.ok(ms.at(-1)! < result.samples / 22.05);
});

Deno.test("Devanagari word offsets slice the JS string to each word", () => {
  const text = "नमस्ते, मैं आज आपकी कैसे मदद कर सकता हूँ?";
  const { words } = speak(text, "hi");
  assert.deepEqual(
    words.map((w) => text.slice(w.charIndex, w.charIndex + w.length)),
    ["नमस्ते", "मैं", "आज", "आपकी", "कैसे", "मदद", "कर", "सकता", "हूँ"],
  );
});

Deno.test("offsets are UTF-16 even after characters outside the BMP", () => {
  const text = "smile 😀 then go";
  const { words } = speak(text);
  const then = words.find((w) => w.charIndex === text.indexOf("then"));
  assert.ok(then, JSON.stringify(words));
  assert.equal(words.at(-1)!.charIndex, text.indexOf("go"));
});

Deno.test("markup characters in plain text are spoken, not parsed as SSML", () => {
  const text = "x < y and Tom & Jerry";
  const { words } = speak(text);
  const starts = words.map((w) => w.charIndex);
  for (const word of ["y", "and", "Tom", "&", "Jerry"]) {
    assert.ok(starts.includes(text.indexOf(word)), `${word} in ${JSON.stringify(starts)}`);
  }
});

Deno.test("SSML marks come back with their names and offsets into the SSML", () => {
  espeak.setVoice("en-us");
  const ssml = '<speak>Hello <mark name="m1"/>world</speak>';
  const events: EspeakEvent[] = [];
  espeak.synthesizeSsml(ssml, (_, e) => void events.push(...e));
  const mark = events.find((e) => e.type === "mark");
  assert.equal(mark?.id, "m1");
  const world = events.find((e) => e.type === "word" && e.charIndex === ssml.indexOf("world"));
  assert.ok(world && mark && mark.audioMs <= world.audioMs);
});

Deno.test("returning true stops synthesis after that chunk and leaves espeak reusable", () => {
  const text = "This sentence is long enough to need many chunks of audio from espeak.";
  const full = speak(text);
  espeak.setVoice("en-us");
  let calls = 0;
  const cut = espeak.synthesize(text, () => ++calls === 2);
  assert.equal(cut.stopped, true);
  assert.equal(calls, 2);
  assert.equal(cut.samples, full.pcm[0].length + full.pcm[1].length);
  // espeak varies a few samples from run to run (random jitter), so compare loosely.
  const again = speak(text);
  assert.ok(Math.abs(again.result.samples - full.result.samples) < full.result.samples * 0.01);
  assert.deepEqual(again.words.map((w) => w.charIndex), full.words.map((w) => w.charIndex));
});

Deno.test("an exception in the handler stops espeak, propagates, and espeak still works", () => {
  espeak.setVoice("en-us");
  assert.throws(() =>
    espeak.synthesize("one two three four five six", () => {
      throw new Error("boom");
    }), /boom/);
  assert.ok(speak("still fine").result.samples > 0);
});

Deno.test("an unknown voice is refused with EspeakError", () => {
  assert.throws(() => espeak.setVoice("xx-nope"), EspeakError);
  assert.throws(() => espeak.setVoice("xx-nope"), /no voice "xx-nope"/);
});

Deno.test("escapeText maps each escaped code point back to its character", () => {
  const { escaped, map } = escapeText("a<b&😀");
  assert.equal(escaped, "a&lt;b&amp;😀");
  // a, &lt; (4 code points), b, &amp; (5), 😀 (1 code point, 2 UTF-16 units), end
  assert.deepEqual([...map], [0, 1, 1, 1, 1, 2, 3, 3, 3, 3, 3, 4, 6]);
});
