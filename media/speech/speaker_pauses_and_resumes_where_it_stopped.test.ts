// A caller's "yeah" pauses the bot instead of cutting it off: paused, the speaker gives no frames
// and holds its place; resumed, it goes on with the very next sample. The synthesizer here makes a
// ramp (every sample distinct) in chunks that do not fall on frame boundaries, with one timed word
// per chunk, so both the audio and the heard text can be checked exactly.
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { FRAME_SAMPLES_48K } from "../../wasm/opus.ts";
import { Speaker, type SpeechChunk, type UnitHeard } from "./speaker.ts";

/** Samples per word: 62.5 ms at 48 kHz, so words end in the middle of frames. */
const WORD_SAMPLES = 3000;
const WORD_MS = WORD_SAMPLES / 48;

function synthesizer() {
  const started: string[] = [];
  async function* synth(text: string, signal: AbortSignal): AsyncIterable<SpeechChunk> {
    started.push(text);
    let sample = 0;
    for (const m of text.matchAll(/\S+/g)) {
      if (signal.aborted) return;
      await Promise.resolve();
      const word = m[0].replace(/[.,!?]$/, "");
      const pcm = new Int16Array(WORD_SAMPLES);
      for (let i = 0; i < pcm.length; i++) pcm[i] = ((sample + i) % 30000) + 1;
      const at = (sample / WORD_SAMPLES) * WORD_MS;
      yield {
        pcm,
        words: [{
          text: word,
          charStart: m.index!,
          charEnd: m.index! + word.length,
          startMs: at,
          endMs: at + WORD_MS,
        }],
      };
      sample += WORD_SAMPLES;
    }
  }
  return { synth, started };
}

function recorder() {
  const { synth, started } = synthesizer();
  const log: string[] = [];
  const done: UnitHeard[] = [];
  const speaker = new Speaker(synth, {
    onUnitStarted: (u) => log.push(`start ${u.unitId}`),
    onProgress: (u, heard) => log.push(`progress ${u.unitId} ${heard}`),
    onUnitDone: (u) => {
      done.push(u);
      log.push(`done ${u.unitId}`);
    },
    onTurnFinished: (t) => log.push(`finished ${t}`),
    onIdle: () => log.push("idle"),
  });
  return { speaker, log, done, started };
}

const settle = () => new Promise((r) => setTimeout(r, 0));
const TEXT = "one two three four five six seven eight nine ten.";
const unit = { turnId: "t1", unitId: "t1.1", text: TEXT };

/** Every frame of the unit played without a pause. */
async function unpaused(): Promise<Int16Array[]> {
  const { speaker } = recorder();
  speaker.enqueue(unit, true);
  await settle();
  const frames: Int16Array[] = [];
  for (let f = speaker.next(); f; f = speaker.next()) frames.push(f.slice());
  return frames;
}

/** The words whose audio ended within `frames` frames, counted independently of the speaker. */
function wordsIn(frames: number): string {
  const n = Math.floor((frames * 20) / WORD_MS);
  return TEXT.replace(/\.$/, "").split(" ").slice(0, n).join(" ");
}

Deno.test("a resumed unit goes on with the very next sample, and is heard whole", async () => {
  const reference = await unpaused();
  assertEquals(reference.length, Math.ceil((10 * WORD_SAMPLES) / FRAME_SAMPLES_48K));
  const { speaker, log, done } = recorder();
  speaker.enqueue(unit, true);
  await settle();
  const sent: Int16Array[] = [];
  for (let i = 0; i < 7; i++) sent.push(speaker.next()!.slice());
  assertEquals(speaker.pause(), true);
  assertEquals(speaker.paused, true);
  const before = log.length;
  for (let i = 0; i < 40; i++) assertEquals(speaker.next(), undefined, `paused frame ${i}`);
  await settle();
  assertEquals(log.length, before, "no progress, unit or turn event while paused");
  assertEquals(speaker.resume(), true);
  assertEquals(speaker.paused, false);
  for (let f = speaker.next(); f; f = speaker.next()) sent.push(f.slice());
  assertEquals(sent.length, reference.length);
  for (let i = 0; i < sent.length; i++) assertEquals(sent[i], reference[i], `frame ${i}`);
  assertEquals(done.map((u) => [u.heard, u.cutOff]), [[TEXT, false]]);
  assertEquals(log.slice(-3), ["done t1.1", "finished t1", "idle"]);
});

Deno.test("a pause before the first frame holds the unit at its first sample", async () => {
  const reference = await unpaused();
  const { speaker, log } = recorder();
  speaker.enqueue(unit, true);
  assertEquals(speaker.pause(), true, "queued speech can be paused before its audio comes");
  await settle();
  assertEquals(speaker.next(), undefined);
  assertEquals(log, [], "the unit did not start");
  speaker.resume();
  assertEquals(speaker.next(), reference[0]);
  assertEquals(log[0], "start t1.1");
});

Deno.test("a cut while paused hears only the frames sent before the pause", async () => {
  for (const sentFrames of [0, 3, 4, 7, 13, 30]) {
    const { speaker, done, log } = recorder();
    speaker.enqueue(unit, false);
    speaker.enqueue({ turnId: "t1", unitId: "t1.2", text: "more to say" }, true);
    await settle();
    for (let i = 0; i < sentFrames; i++) assert(speaker.next() !== undefined);
    speaker.pause();
    for (let i = 0; i < 25; i++) speaker.next();
    await settle();
    const stopped = speaker.cutOff("t1");
    assertEquals(stopped.map((u) => [u.unitId, u.heard, u.cutOff]), [
      ["t1.1", wordsIn(sentFrames), true],
      ["t1.2", "", true],
    ], `after ${sentFrames} frames`);
    assertEquals(done.length, 2);
    assertEquals(log.includes("finished t1"), false, "a cut turn does not finish, as today");
    assertEquals(log.at(-1), "idle");
    assertEquals(speaker.paused, false, "nothing left to hold: the pause ended with the cut");
    assertEquals(speaker.pausedMs(), 0);
  }
});

Deno.test("pausing twice or resuming twice changes nothing; pausing idle is harmless", async () => {
  const reference = await unpaused();
  const { speaker } = recorder();
  assertEquals(speaker.pause(0), false, "idle: nothing to hold");
  assertEquals(speaker.paused, false);
  assertEquals(speaker.resume(), false);
  speaker.enqueue(unit, true);
  await settle();
  assertEquals(speaker.next(), reference[0], "an idle pause did not hold the next unit");
  assertEquals(speaker.pause(1000), true);
  assertEquals(speaker.pause(1500), false);
  assertEquals(speaker.pausedMs(1800), 800, "the pause lasts from the first pause()");
  assertEquals(speaker.next(), undefined);
  assertEquals(speaker.resume(), true);
  assertEquals(speaker.resume(), false);
  assertEquals(speaker.pausedMs(1900), 0);
  assertEquals(speaker.next(), reference[1]);
});

Deno.test("a turn that closes during a pause finishes only on resume", async () => {
  const { speaker, log } = recorder();
  speaker.enqueue(unit, true);
  await settle();
  speaker.next();
  speaker.pause();
  // Another turn closes with nothing to say while the first is paused.
  speaker.enqueue({ turnId: "t2", unitId: "t2.end", text: "" }, true);
  assertEquals(log.includes("finished t2"), false);
  speaker.resume();
  assertEquals(log.includes("finished t2"), true);
});

Deno.test("while paused, synthesis goes on within the usual bounds", async () => {
  const { speaker, started } = recorder();
  speaker.enqueue(unit, false);
  await settle();
  speaker.next();
  speaker.pause();
  for (let i = 2; i <= 80; i++) {
    speaker.enqueue({ turnId: "t1", unitId: `t1.${i}`, text: `unit ${i}` }, false);
  }
  assertEquals(speaker.queued.units, 64, "the unit cap holds while paused");
  for (let i = 0; i < 10; i++) {
    speaker.next();
    await settle();
  }
  assertEquals(started.length, 3, "only the paused unit and the next two are synthesized");
  assertEquals(speaker.synthesizing, 3);
  speaker.resume();
  // The paused unit plays out and one more unit's synthesis starts.
  while (speaker.queued.units === 64) {
    speaker.next();
    await settle();
  }
  assertEquals(started.length, 4);
});

Deno.test("a pause over a reply that has played all it had holds the reply's next unit", async () => {
  const reference = await unpaused();
  const { speaker, log } = recorder();
  // The reply's first unit plays out; its next one has not come (a streamed reply running late).
  speaker.enqueue({ turnId: "t1", unitId: "t1.0", text: "hello." }, false);
  await settle();
  while (speaker.next()) { /* played out */ }
  assertEquals(speaker.busy, false);
  assertEquals(speaker.pause(0, "t1"), true, "the caller speaks over the reply: it is held");
  speaker.enqueue({ ...unit, unitId: "t1.1" }, true);
  await settle();
  for (let i = 0; i < 20; i++) assertEquals(speaker.next(), undefined, `frame ${i} while paused`);
  assertEquals(log.includes("start t1.1"), false);
  assertEquals(speaker.resume(), true);
  assertEquals(speaker.next(), reference[0], "the held unit starts at its first sample");
});

Deno.test("a pause over a reply cut with nothing queued ends with the cut", () => {
  const { speaker } = recorder();
  speaker.pause(0, "t1");
  speaker.cutOff("t1");
  assertEquals(speaker.paused, false, "nothing left to hold");
});
