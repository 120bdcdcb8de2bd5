// A held turn (a speculative turn's reply): its units are synthesized at once but give no frame
// until release(); discarded, they go without a trace, as nothing of them was heard.
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { Speaker, type SpeechChunk } from "./speaker.ts";

/** 100 ms of audio per word; counts the synthesis requests. */
function recorder(limits: { maxUnits?: number; maxChars?: number } = {}) {
  const log: string[] = [];
  const synthesized: string[] = [];
  async function* synth(text: string, signal: AbortSignal): AsyncIterable<SpeechChunk> {
    synthesized.push(text);
    for (const _ of text.split(/\s+/)) {
      if (signal.aborted) return;
      await Promise.resolve();
      yield { pcm: new Int16Array(4800).fill(1000), words: [] };
    }
  }
  const speaker = new Speaker(synth, {
    onTurnAudioStarted: (t) => log.push(`audio ${t}`),
    onTurnAudioReady: (t) => log.push(`ready ${t}`),
    onUnitDone: (u) => log.push(`done ${u.unitId}`),
    onTurnFinished: (t) => log.push(`finished ${t}`),
    onIdle: () => log.push("idle"),
  }, limits);
  return { speaker, log, synthesized };
}

const settle = () => new Promise((r) => setTimeout(r, 0));

Deno.test("a held reply is synthesized at once, plays nothing, and plays whole once released", async () => {
  const { speaker, log, synthesized } = recorder();
  speaker.hold("t1");
  speaker.enqueue({ turnId: "t1", unitId: "t1.1", text: "It is nine." }, false);
  speaker.enqueue({ turnId: "t1", unitId: "t1.end", text: "" }, true);
  await settle();
  assertEquals(synthesized, ["It is nine."]);
  assertEquals(log, ["ready t1"]);
  // Held: silence, not even the end of the turn, however long the window stays open.
  for (let i = 0; i < 50; i++) assertEquals(speaker.next(), undefined);
  assertEquals(speaker.audioWaiting, false);
  assert(speaker.busy, "a held reply still occupies the queue");
  speaker.release("t1");
  assert(speaker.next() !== undefined, "the released reply did not play at the next frame");
  while (speaker.next()) { /* plays out */ }
  assertEquals(log, ["ready t1", "audio t1", "done t1.1", "finished t1", "idle"]);
});

Deno.test("a discarded reply is never reported heard, and the queue is free again", async () => {
  const { speaker, log } = recorder({ maxUnits: 2 });
  speaker.hold("t1");
  assert(speaker.enqueue({ turnId: "t1", unitId: "t1.1", text: "one two" }, false));
  assert(speaker.enqueue({ turnId: "t1", unitId: "t1.2", text: "three" }, false));
  // Bounded as any reply: the queue's limits hold for held units too.
  assertEquals(speaker.enqueue({ turnId: "t1", unitId: "t1.3", text: "four" }, true), false);
  await settle();
  speaker.discard("t1");
  assertEquals(log, ["ready t1", "idle"]);
  assertEquals([speaker.busy, speaker.queued], [false, { units: 0, chars: 0 }]);
  // The next turn plays at once.
  speaker.enqueue({ turnId: "t2", unitId: "t2.1", text: "hello" }, true);
  await settle();
  assert(speaker.next() !== undefined);
  while (speaker.next()) { /* plays out */ }
  assertEquals(log.slice(2), ["audio t2", "done t2.1", "finished t2", "idle"]);
});

Deno.test("a turn whose last unit came while held finishes when released, not before", async () => {
  const { speaker, log } = recorder();
  speaker.hold("t1");
  speaker.enqueue({ turnId: "t1", unitId: "t1.end", text: "" }, true);
  await settle();
  assertEquals(log, []);
  speaker.release("t1");
  assertEquals(log, ["finished t1"]);
});
