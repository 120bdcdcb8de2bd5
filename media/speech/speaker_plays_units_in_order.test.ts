// The speaker fed with scripted synthesis output: 100 ms of audio per word, so what was heard
// at each frame is known exactly.
import { assertEquals } from "../../tests/helpers/assert.ts";
import { Speaker, type SpeechChunk, type UnitHeard } from "./speaker.ts";

function scripted(text: string): SpeechChunk[] {
  const chunks: SpeechChunk[] = [];
  let at = 0;
  for (const m of text.matchAll(/\S+/g)) {
    const word = m[0].replace(/[.,!?]$/, "");
    const n = chunks.length;
    chunks.push({
      pcm: new Int16Array(4800).fill(1000 + n),
      words: [{
        text: word,
        charStart: m.index!,
        charEnd: m.index! + word.length,
        startMs: at,
        endMs: at + 100,
      }],
    });
    at += 100;
  }
  return chunks;
}

async function* synth(text: string, signal: AbortSignal): AsyncIterable<SpeechChunk> {
  for (const c of scripted(text)) {
    if (signal.aborted) return;
    await Promise.resolve();
    yield c;
  }
}

function recorder() {
  const log: string[] = [];
  const done: UnitHeard[] = [];
  const speaker = new Speaker(synth, {
    onTurnAudioStarted: (t) => log.push(`audio ${t}`),
    onUnitStarted: (u) => log.push(`start ${u.unitId}`),
    onUnitDone: (u) => {
      done.push(u);
      log.push(`done ${u.unitId}`);
    },
    onTurnFinished: (t) => log.push(`finished ${t}`),
    onIdle: () => log.push("idle"),
  });
  return { speaker, log, done };
}

const settle = () => new Promise((r) => setTimeout(r, 0));

Deno.test("units play in order, whole, and the turn finishes after its last unit", async () => {
  const { speaker, log, done } = recorder();
  speaker.enqueue({ turnId: "t1", unitId: "t1.1", text: "Hello there." }, false);
  speaker.enqueue({ turnId: "t1", unitId: "t1.2", text: "How are you?" }, false);
  speaker.enqueue({ turnId: "t1", unitId: "t1.end", text: "" }, true);
  await settle();
  let frames = 0;
  while (speaker.next()) frames++;
  assertEquals(frames, 25); // 5 words × 100 ms
  assertEquals(log, [
    "audio t1",
    "start t1.1",
    "done t1.1",
    "start t1.2",
    "done t1.2",
    "finished t1",
    "idle",
  ]);
  assertEquals(done.map((u) => [u.heard, u.cutOff]), [["Hello there.", false], [
    "How are you?",
    false,
  ]]);
});

Deno.test("a cut-off stops at the next frame and reports the heard prefix", async () => {
  const { speaker, done } = recorder();
  speaker.enqueue({ turnId: "t2", unitId: "t2.1", text: "Once upon a time there was" }, false);
  speaker.enqueue({ turnId: "t2", unitId: "t2.2", text: "a fox." }, true);
  await settle();
  for (let i = 0; i < 12; i++) speaker.next(); // 240 ms: "Once upon" heard, "a" cut
  const stopped = speaker.cutOff("t2");
  assertEquals(speaker.next(), undefined);
  assertEquals(stopped.map((u) => [u.unitId, u.heard, u.cutOff]), [
    ["t2.1", "Once upon", true],
    ["t2.2", "", true],
  ]);
  assertEquals(done.length, 2);
  assertEquals(speaker.busy, false);
});

Deno.test("cutting one turn leaves another turn's units queued", async () => {
  const { speaker } = recorder();
  speaker.enqueue({ turnId: "t3", unitId: "t3.1", text: "old reply" }, true);
  speaker.enqueue({ turnId: "t4", unitId: "t4.1", text: "new reply" }, true);
  await settle();
  speaker.cutOff("t3");
  assertEquals(speaker.busy, true);
  assertEquals(speaker.next()?.[0], 1000);
});

Deno.test("a slow synthesizer leaves gaps of silence that are not counted as heard", async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  async function* slow(text: string): AsyncIterable<SpeechChunk> {
    const [first, ...rest] = scripted(text);
    yield first;
    await gate;
    yield* rest;
  }
  const done: UnitHeard[] = [];
  const speaker = new Speaker(slow, { onUnitDone: (u) => done.push(u) });
  speaker.enqueue({ turnId: "t5", unitId: "t5.1", text: "one two three" }, true);
  await settle();
  for (let i = 0; i < 5; i++) speaker.next();
  assertEquals(speaker.next(), undefined); // underrun: silence
  assertEquals(speaker.cutOff()[0].heard, "one");
  release();
});
