// Whatever the brain sends, one call's speaker holds a bounded amount: units beyond the unit or
// character cap are refused, and only the playing unit and a few after it are synthesized. A unit
// whose synthesis fails part way is reported heard up to where its audio stopped.
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { Speaker, type SpeechChunk, type UnitHeard } from "./speaker.ts";

/** 100 ms of audio per word, each word timed; `failAfter` words, then it throws. */
function synthesizer(opts: { failAfter?: number } = {}) {
  const started: string[] = [];
  async function* synth(text: string, signal: AbortSignal): AsyncIterable<SpeechChunk> {
    started.push(text);
    let at = 0, n = 0;
    for (const m of text.matchAll(/\S+/g)) {
      if (signal.aborted) return;
      if (opts.failAfter !== undefined && n === opts.failAfter) {
        throw new Error("thread crashed");
      }
      await Promise.resolve();
      const word = m[0].replace(/[.,!?]$/, "");
      yield {
        pcm: new Int16Array(4800).fill(1000),
        words: [{
          text: word,
          charStart: m.index!,
          charEnd: m.index! + word.length,
          startMs: at,
          endMs: at + 100,
        }],
      };
      at += 100;
      n++;
    }
  }
  return { synth, started };
}

const settle = () => new Promise((r) => setTimeout(r, 0));
const unit = (i: number, text = `Unit number ${i}.`) => ({
  turnId: "t1",
  unitId: `t1.${i}`,
  text,
});

Deno.test("units beyond the unit cap are refused; a refused last unit still ends the turn", async () => {
  const { synth } = synthesizer();
  const finished: string[] = [];
  const speaker = new Speaker(synth, { onTurnFinished: (t) => finished.push(t) }, {
    maxUnits: 5,
    maxChars: 10_000,
  });
  const accepted = Array.from({ length: 8 }, (_, i) => speaker.enqueue(unit(i), false));
  assertEquals(accepted, [true, true, true, true, true, false, false, false]);
  assertEquals(speaker.enqueue(unit(8), true), false);
  assertEquals(speaker.queued.units, 5);
  await settle();
  while (speaker.busy) {
    speaker.next();
    await settle();
  }
  assertEquals(finished, ["t1"], "the turn ended once what was queued played out");
});

Deno.test("units beyond the character cap are refused, and room comes back as units play", async () => {
  const { synth } = synthesizer();
  const speaker = new Speaker(synth, {}, { maxUnits: 100, maxChars: 40 });
  assertEquals(speaker.enqueue(unit(1, "one two three four five six"), false), true); // 27
  assertEquals(speaker.enqueue(unit(2, "seven eight nine ten"), false), false); // 27 + 20 > 40
  assertEquals(speaker.enqueue(unit(3, "eleven"), false), true);
  assertEquals(speaker.queued, { units: 2, chars: 33 });
  assertEquals(speaker.enqueue(unit(4, "x".repeat(41)), false), false, "longer than the cap");
  await settle();
  while (speaker.queued.units === 2) {
    speaker.next();
    await settle();
  }
  assertEquals(speaker.enqueue(unit(5, "seven eight nine ten"), false), true);
});

Deno.test("only the playing unit and the next two are synthesized", async () => {
  const { synth, started } = synthesizer();
  const speaker = new Speaker(synth, {}, { maxUnits: 64, maxChars: 4000, synthesisAhead: 2 });
  for (let i = 0; i < 20; i++) speaker.enqueue(unit(i), false);
  await settle();
  assertEquals(started.length, 3);
  assertEquals(speaker.synthesizing, 3);
  // Play the first unit out: one more starts.
  const first = speaker.queued.units;
  while (speaker.queued.units === first) {
    speaker.next();
    await settle();
  }
  assertEquals(started.length, 4);
  // A cut-off frees the queue; nothing of the cut turn is synthesized after it.
  speaker.cutOff("t1");
  await settle();
  assertEquals(started.length, 4);
  assertEquals(speaker.queued, { units: 0, chars: 0 });
});

Deno.test("a unit whose synthesis fails part way is heard up to where its audio stopped", async () => {
  const { synth } = synthesizer({ failAfter: 3 });
  const done: UnitHeard[] = [];
  const errors: boolean[] = [];
  const speaker = new Speaker(synth, {
    onUnitDone: (u) => done.push(u),
    onSynthesisError: (_u, _e, gotAudio) => errors.push(gotAudio),
  });
  speaker.enqueue(unit(1, "one two three four five six"), true);
  await settle();
  while (speaker.busy) {
    speaker.next();
    await settle();
  }
  assertEquals(errors, [true]);
  assertEquals(done.length, 1);
  assertEquals([done[0].heard, done[0].cutOff], ["one two three", true]);
});

Deno.test("a unit whose synthesis fails before any audio is heard as nothing", async () => {
  const { synth } = synthesizer({ failAfter: 0 });
  const done: UnitHeard[] = [];
  const errors: boolean[] = [];
  const speaker = new Speaker(synth, {
    onUnitDone: (u) => done.push(u),
    onSynthesisError: (_u, _e, gotAudio) => errors.push(gotAudio),
  });
  speaker.enqueue(unit(1, "one two"), true);
  await settle();
  assert(speaker.next() === undefined);
  assertEquals(errors, [false]);
  assertEquals([done[0].heard, done[0].cutOff], ["", true]);
});
