// A paused turn spoken as one utterance is cut back into its phrases at the synthesiser's breaks,
// and only there: the bench's key stays exact for turns whose voice runs on across the pause.
import { assert, assertEquals, assertMatch, assertThrows } from "../../tests/helpers/assert.ts";
import { RATE, speak, speakTurn } from "./data.ts";
import { QUIET, splitAtBreaks } from "./utterance.ts";

const at = (ms: number) => Math.round((ms * RATE) / 1000);
const peak = (pcm: Int16Array) => Math.max(...pcm.map(Math.abs));

Deno.test("a turn spoken with breaks comes back as its phrases, each from its first sound to its last", async () => {
  const phrases = ["my number is nine eight four", "five two one", "two three four seven"];
  for (
    const voice of [
      { engine: "festival" as const, name: "kal", rate: 1 },
      { engine: "espeak" as const, name: "en-us+m3", rate: 165 },
      { engine: "espeak" as const, name: "hi", rate: 150 },
    ]
  ) {
    const said = voice.name === "hi"
      ? ["मेरा नंबर नौ आठ चार", "पाँच दो एक", "दो तीन चार सात"]
      : phrases;
    const parts = await speakTurn(said, voice);
    assertEquals(parts.length, 3, voice.name);
    for (const [i, p] of parts.entries()) {
      const ms = (p.length * 1000) / RATE;
      // Three or more words each: far longer than a stop's gap, shorter than the whole turn.
      assert(ms > 400 && ms < 2500, `${voice.name} phrase ${i}: ${ms} ms`);
      assert(Math.abs(p[0]) >= QUIET && Math.abs(p.at(-1)!) >= QUIET, `${voice.name} ${i} trimmed`);
      assert(peak(p.subarray(0, at(30))) > 150, `${voice.name} ${i} starts with sound`);
    }
    // The last phrase is the utterance's own end: about as long as that phrase said alone.
    const alone = await speak(said[2], voice);
    const ratio = parts[2].length / alone.length;
    assert(ratio > 0.7 && ratio < 1.4, `${voice.name}: last phrase ${ratio.toFixed(2)} of alone`);
  }
});

Deno.test("an utterance is cut only at its longest quiet runs, and one without enough breaks is refused", () => {
  const tone = (ms: number) =>
    Int16Array.from({ length: at(ms) }, (_, i) => (i % 20 < 10 ? 8000 : -8000));
  const quiet = (ms: number) => new Int16Array(at(ms));
  const join = (...xs: Int16Array[]) => {
    const out = new Int16Array(xs.reduce((n, x) => n + x.length, 0));
    let o = 0;
    for (const x of xs) (out.set(x, o), o += x.length);
    return out;
  };
  // A 60 ms stop inside the first phrase, a 200 ms and a 500 ms break.
  const pcm = join(tone(300), quiet(60), tone(200), quiet(500), tone(400), quiet(200), tone(100));
  const two = splitAtBreaks(pcm, 2);
  assertEquals(two.map((p) => p.length), [at(300 + 60 + 200), at(400 + 200 + 100)]);
  const three = splitAtBreaks(pcm, 3);
  assertEquals(three.map((p) => p.length), [at(560), at(400), at(100)]);
  assertMatch(assertThrows(() => splitAtBreaks(pcm, 4), Error).message, /need 3 breaks/);
});
