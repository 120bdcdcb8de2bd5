// The turn-taking bench's metric on cases whose answer is known: a 576 ms silence (a 600 ms pause
// as the VAD's 32 ms frames see it) cuts a turn off at a 500 ms fixed wait and not at 700 ms,
// through the worker's own CallerAudio and VoiceActivity (Silero's scores replayed: 1 in speech,
// 0 in silence, so the answer does not hang on the model).
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { assemble, RATE, type TurnKey } from "./data.ts";
import { cutByPause, interrupted, judgeTurn, summarise } from "./metrics.ts";
import { runClip, type Scores } from "./run.ts";

const noise = (ms: number) =>
  Int16Array.from({ length: (ms * RATE) / 1000 }, (_, i) => (i % 2 ? 6000 : -6000));

/** Scores as Silero would give them for clean speech: 1 on every frame the VAD does not gate. */
function scoresOf(pcm: Int16Array): Scores {
  const p: number[] = [];
  for (let o = 0; o + 512 <= pcm.length; o += 512) {
    let e = 0;
    for (let i = o; i < o + 512; i++) e += (pcm[i] / 32768) ** 2;
    if (e / 512 >= 1e-6) p.push(1); // -60 dBFS, the VAD's default gate
  }
  return { probabilities: Float32Array.from(p) };
}

const twoPhrases = (pauseMs: number) =>
  assemble([{ text: "I need milk", pcm: noise(640) }, {
    text: "and bread please",
    pcm: noise(640),
  }], [
    pauseMs,
  ]);

Deno.test("a 600 ms pause is a false cut-off at a 500 ms fixed wait and not at 700 ms", async () => {
  const { pcm, key } = twoPhrases(600);
  const scores = scoresOf(pcm);
  const at500 = await runClip(pcm, key, scores, { mode: "fixed", waitMs: 500 });
  const r500 = judgeTurn(key, at500);
  assert(r500.cut, `cut at 500 ms: ${JSON.stringify(at500.turns)}`);
  assertEquals(at500.turns[0].text, "I need milk");
  const at700 = await runClip(pcm, key, scores, { mode: "fixed", waitMs: 700 });
  const r700 = judgeTurn(key, at700);
  assert(!r700.cut, `not cut at 700 ms: ${JSON.stringify(at700.turns)}`);
  assertEquals(at700.turns.map((t) => t.text), ["I need milk and bread please"]);
  // The wait is the fixed one in whole 32 ms frames: 22 frames = 704 ms (the speech ends on a
  // frame edge: 300 + 640 + 600 + 640 = 2180 ms, inside frame 68; the silence starts at 2208).
  assertEquals(r700.waitMs, 2208 + 704 - 2180);
  const s = summarise([{ key, result: r500 }, { key, result: r700 }]);
  assertEquals([s.turns, s.paused, s.cut, s.cutRate, s.missed], [2, 2, 1, 0.5, 0]);
  assertEquals(cutByPause([{ key, result: r500 }, { key, result: r700 }]), {
    "600": { n: 2, cut: 1 },
  });
});

Deno.test("a turn never sent after its end is missed, and one sent only after it is not cut", () => {
  const key: TurnKey = {
    segments: [{ text: "a", startMs: 300, endMs: 900 }, { text: "b", startMs: 1500, endMs: 2000 }],
    endMs: 2000,
    pausesMs: [600],
  };
  const early = judgeTurn(key, {
    turns: [{ atMs: 1400, text: "a" }],
    speculated: [],
    interrupts: [],
    resumes: [],
  });
  assertEquals(early, { cut: true, waitMs: undefined });
  const late = judgeTurn(key, {
    turns: [{ atMs: 2250, text: "a b" }],
    speculated: [],
    interrupts: [],
    resumes: [],
  });
  assertEquals(late, { cut: false, waitMs: 250 });
  assertEquals(summarise([{ key, result: early }, { key, result: late }]).missed, 1);
  assert(interrupted(key, { turns: [], speculated: [], interrupts: [400], resumes: [] }));
  assert(!interrupted(key, { turns: [], speculated: [], interrupts: [], resumes: [700] }));
});

Deno.test("a backchannel over the bot resumes it in adaptive mode and cuts it in fixed mode", async () => {
  const { pcm, key } = assemble([{ text: "yeah", pcm: noise(300) }], []);
  const scores = scoresOf(pcm);
  const adaptive = await runClip(pcm, key, scores, { mode: "adaptive" }, true);
  assert(!interrupted(key, adaptive), JSON.stringify(adaptive));
  assertEquals(adaptive.resumes.length, 1);
  const fixed = await runClip(pcm, key, scores, { mode: "fixed", waitMs: 500 }, true);
  assert(interrupted(key, fixed), JSON.stringify(fixed));
});
