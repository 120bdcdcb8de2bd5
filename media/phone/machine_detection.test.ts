// Answering machine detection on synthesized calls, as a worker runs it (bench/amd/run_detector.ts:
// 8 kHz line audio, Silero on the 16 kHz edge's frames): festival/espeak-ng speech through G.711
// μ-law with line noise, made by the bench's labelled-set generator (cached in test-artifacts/).
// The tone-only and silence cases are made here.
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { makeClip, readClip, type Recipe, rng } from "../../bench/amd/labelled_set.ts";
import { runDetector } from "../../bench/amd/run_detector.ts";
import { g711Decode, g711Encode } from "./g711.ts";
import {
  type AmdOutcome,
  DEFAULT_MACHINE_DETECTION,
  MachineDetection,
} from "./machine_detection.ts";

const CEILING = DEFAULT_MACHINE_DETECTION.ceilingMs;
const PRIYA =
  "Hi, you've reached Priya. I can't take your call right now, please leave a message after the tone.";

const recipe = (r: Partial<Recipe> & Pick<Recipe, "label" | "text" | "voice">): Recipe => ({
  leadMs: 600,
  tailMs: 1500,
  snrDb: 20,
  seed: 1000,
  ...r,
});

const of = <T extends AmdOutcome["type"]>(outcomes: AmdOutcome[], type: T) =>
  outcomes.filter((o): o is Extract<AmdOutcome, { type: T }> => o.type === type);

/**
 * White line noise at about -49 dBFS (loud enough that Silero is run, not gated), with `tone` laid
 * in, through G.711 μ-law.
 */
function line(ms: number, tone?: { startMs: number; ms: number; hz: number }): Int16Array {
  const pcm = new Int16Array(ms * 8);
  const r = rng(3);
  for (let i = 0; i < pcm.length; i++) {
    let s = (r() - 0.5) * 400;
    if (tone && i >= tone.startMs * 8 && i < (tone.startMs + tone.ms) * 8) {
      s += 6000 * Math.sin((2 * Math.PI * tone.hz * i) / 8000);
    }
    pcm[i] = Math.round(s);
  }
  return g711Decode("PCMU", g711Encode("PCMU", pcm));
}

Deno.test("a festival voicemail greeting through G.711 is a machine within the ceiling", async () => {
  const clip = await makeClip(recipe({
    label: "machine",
    text: PRIYA,
    voice: { engine: "festival", name: "kal", rate: 1 },
    tailMs: 3500,
  }));
  const { outcomes } = await runDetector(await readClip(clip));
  const [decision] = of(outcomes, "decision");
  assertEquals(decision?.decision, "machine", JSON.stringify(outcomes));
  assert(decision.atMs <= CEILING, `decided at ${decision.atMs} ms`);
  // It spoke long before the ceiling: machineSpeechMs after its onset, give or take the VAD.
  assert(decision.atMs >= clip.speechStartMs + DEFAULT_MACHINE_DETECTION.machineSpeechMs - 100);
  // No beep follows: once the greeting is over and the line stays quiet, no_beep says so.
  const [noBeep] = of(outcomes, "no_beep");
  assertEquals(noBeep?.why, "silence", JSON.stringify(outcomes));
  assert(
    noBeep.atMs > clip.speechEndMs,
    `no_beep at ${noBeep.atMs}, speech to ${clip.speechEndMs}`,
  );
});

Deno.test('"Hello?" then silence is a person, decided once the silence is long enough', async () => {
  for (
    const voice of [
      { engine: "festival", name: "kal", rate: 1 },
      { engine: "espeak", name: "en-us+m3", rate: 165 },
    ] as const
  ) {
    const clip = await makeClip(recipe({ label: "human", text: "Hello?", voice, tailMs: 4000 }));
    const { outcomes } = await runDetector(await readClip(clip));
    assertEquals(outcomes.length, 1, JSON.stringify(outcomes));
    const [d] = of(outcomes, "decision");
    assertEquals([d.decision, d.why], ["human", "short_greeting"], voice.engine);
    const silence = d.atMs - clip.speechEndMs;
    // The silence that ends a greeting, plus the VAD's lag at either end of the word.
    const want = DEFAULT_MACHINE_DETECTION.afterGreetingSilenceMs;
    assert(silence >= want - 100 && silence <= want + 400, `${voice.engine}: ${silence} ms`);
  }
});

Deno.test("a beep after a greeting is found within 100 ms of its start", async () => {
  const clip = await makeClip(recipe({
    label: "machine",
    text: "The person you are calling is not available. Please leave your message after the beep.",
    voice: { engine: "espeak", name: "en-us+m3", rate: 165 },
    beep: { hz: 850, ms: 250, gapMs: 500 },
  }));
  const { outcomes } = await runDetector(await readClip(clip));
  assertEquals(of(outcomes, "decision")[0]?.decision, "machine", JSON.stringify(outcomes));
  const beeps = of(outcomes, "beep");
  assertEquals(beeps.length, 1, JSON.stringify(outcomes));
  const [b] = beeps;
  assert(
    Math.abs(b.startMs - clip.beepStartMs!) <= 100,
    `start ${b.startMs} vs ${clip.beepStartMs}`,
  );
  // Reported when it is over (the machine records from then on), not before.
  assert(b.atMs >= clip.beepEndMs! - 30 && b.atMs <= clip.beepEndMs! + 60, `at ${b.atMs}`);
});

Deno.test("a tone alone, with no speech, is a machine, not a person", async () => {
  const { outcomes } = await runDetector(line(3000, { startMs: 1000, ms: 400, hz: 1000 }));
  const [d] = of(outcomes, "decision");
  assertEquals([d?.decision, d?.why], ["machine", "tone"], JSON.stringify(outcomes));
  // Decided once the tone has lasted minMs (150 ms), well before the ceiling.
  assert(d.atMs >= 1150 && d.atMs <= 1250, `decided at ${d.atMs}`);
  assertEquals(of(outcomes, "beep").map((b) => b.hz), [1000]);
});

Deno.test("a line that stays silent is a person at the ceiling", async () => {
  const { outcomes } = await runDetector(line(CEILING + 1000));
  assertEquals(outcomes, [{ type: "decision", decision: "human", atMs: CEILING, why: "silence" }]);
});

Deno.test("a greeting, a pause and more speech adds up to a machine; the ceiling rules", () => {
  // Scripted VAD frames (the rules, not the VAD): 32 ms frames of probability p over [from, to).
  const run = (spans: [number, number][], until: number, options = {}) => {
    const amd = new MachineDetection(options);
    const out: AmdOutcome[] = [];
    for (let t = 0; t < until && amd.state === "listening"; t += 32) {
      const p = spans.some(([a, b]) => t >= a && t < b) ? 0.9 : 0.05;
      out.push(...amd.handle({ type: "vad", startMs: t, endMs: t + 32, probability: p }));
    }
    return out.filter((o) => o.type === "decision").map((o) => o.type === "decision" && o.why);
  };
  // 2 s, a 1.3 s pause (longer than afterGreetingSilenceMs), 1 s more: 3 s of speech.
  assertEquals(run([[300, 2300], [3600, 4600]], 6000), ["long_speech"]);
  // 2 s of greeting then silence: neither short nor long enough; the ceiling calls it a person.
  assertEquals(run([[300, 2300]], 6000), ["unsure"]);
  // Speech from 2.5 s still going at the ceiling, longer than a person's greeting: a machine.
  assertEquals(run([[2500, 6000]], 6000), ["long_greeting_at_ceiling"]);
  // Speech from 3.5 s, 1 s long at the ceiling: too early to tell, a person.
  assertEquals(run([[3500, 6000]], 6000), ["unsure"]);
});
