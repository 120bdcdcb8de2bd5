// An outbound call's machine watch (machine_watch.ts) on a phone's real audio: festival's voicemail
// greeting and a sine beep, or festival's "Hello?", through μ-law and the worker's phone edge, the
// real Silero VAD scoring the same frames. What it does per mode: the greeting's release, the
// hang-up, the log and what the brain is told.
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import {
  type CalleeAudio,
  personSaysHello,
  voicemailWithBeep,
} from "../../tests/helpers/answering_machine.ts";
import { throughPhone } from "../../tests/helpers/phone_speech.ts";
import { MachineWatch, type WatchMode } from "./machine_watch.ts";
import { VoiceActivity } from "../vad/voice_activity.ts";

interface Run {
  logged: [string, Record<string, unknown>][];
  told: [string, Record<string, unknown>][];
  hangUps: number[];
  released?: { why: string; atMs: number };
  watch: MachineWatch;
}

/** Feeds `audio` as the call would, 20 ms at a time, the VAD keeping up as it does in real time. */
async function watch(mode: WatchMode, audio: CalleeAudio, vadFails = false): Promise<Run> {
  let vad: VoiceActivity | undefined;
  let heardMs = 0;
  const run: Run = {
    logged: [],
    told: [],
    hangUps: [],
    watch: new MachineWatch({
      mode,
      openVad: async (onFrame) => {
        if (vadFails) throw new Error("no VAD model");
        return vad = await VoiceActivity.create({}, { onFrame });
      },
      log: { add: (_source, kind, data) => void run.logged.push([kind, data as never]) },
      hangUp: () => void run.hangUps.push(heardMs),
    }),
  };
  void run.watch.greetingMayPlay.then((why) => (run.released = { why, atMs: heardMs }));
  const pcm = throughPhone(audio.pcm8k);
  for (let at = 0; at + 320 <= pcm.length && run.watch.listening; at += 320) {
    run.watch.hear(pcm.subarray(at, at + 320));
    heardMs += 20;
    // The VAD scores what it was given before the next frame (it does in a real call's 20 ms).
    if (vad && run.watch.listening) await vad.push(new Int16Array(0));
    else await new Promise((r) => setTimeout(r, 0));
    // The brain connects a second into the call: what came before is told then.
    if (heardMs === 1000) run.watch.brainReady((kind, body) => void run.told.push([kind, body]));
  }
  await new Promise((r) => setTimeout(r, 0));
  run.watch.stop();
  return run;
}

Deno.test("leave_message: a voicemail is a machine, and the greeting may play once its beep has ended", async () => {
  const audio = await voicemailWithBeep();
  const run = await watch("leave_message", audio);
  assertEquals(run.logged.map(([k, d]) => [k, d.outcome ?? d.heard]), [
    ["machine_detected", "machine"],
    ["beep", true],
  ]);
  assertEquals(run.told, run.logged, "the brain was told what was logged, in order");
  const beep = run.logged[1][1];
  const endMs = audio.beep!.endMs;
  assert(Math.abs(Number(beep.at_ms) - endMs) <= 60, `beep ended at ${beep.at_ms}, not ${endMs}`);
  assert(Math.abs(Number(beep.hz) - 1000) <= 25, `beep at ${beep.hz} Hz`);
  assertEquals(run.released?.why, "beep");
  assert(run.released!.atMs >= endMs, `released at ${run.released!.atMs}, before the beep's end`);
  assertEquals(run.hangUps, []);
});

Deno.test("hang_up: a voicemail is hung up on at the decision, before its beep, and nothing is released", async () => {
  const audio = await voicemailWithBeep();
  const run = await watch("hang_up", audio);
  assertEquals(run.logged.map(([k, d]) => [k, d.outcome]), [["machine_detected", "machine"]]);
  assertEquals(run.hangUps.length, 1);
  assert(run.hangUps[0] < audio.beep!.startMs, `hung up at ${run.hangUps[0]} ms, after the beep`);
  assertEquals(run.released, undefined);
  assert(!run.watch.listening, "the watch still listens after hanging up");
});

Deno.test("a person's hello is a person: the greeting may play after it, whatever the mode", async () => {
  for (const mode of ["hang_up", "leave_message"] as const) {
    const run = await watch(mode, await personSaysHello());
    assertEquals(run.logged.map(([k, d]) => [k, d.outcome]), [["machine_detected", "human"]]);
    assertEquals(run.logged[0][1].why, "short_greeting");
    assertEquals(run.told, run.logged);
    assertEquals(run.released?.why, "human");
    // Decided once the hello (under a second) was followed by 1.2 s of quiet, well before 4.5 s.
    assert(run.released!.atMs >= 1800 && run.released!.atMs < 4500, `at ${run.released!.atMs}`);
    assertEquals(run.hangUps, []);
  }
});

Deno.test("a VAD that fails to open leaves the beep before the ceiling, then a person at 4.5 s", async () => {
  // A machine whose beep comes early ("Leave a message." then the tone) is still found by the tone.
  const short = await voicemailWithBeep("Leave a message.");
  const machine = await watch("leave_message", short, true);
  assertEquals(machine.logged.map(([k, d]) => [k, k === "beep" ? d.heard : d.why]), [
    ["machine_detected", "tone"],
    ["beep", true],
  ]);
  assertEquals(machine.released?.why, "beep");
  // Past the ceiling nothing was heard as speech: a person (the greeting plays), never a stuck call.
  for (const audio of [await personSaysHello(), await voicemailWithBeep()]) {
    const run = await watch("hang_up", audio, true);
    assertEquals(run.logged.map(([k, d]) => [k, d.outcome, d.why]), [
      ["machine_detected", "human", "silence"],
    ]);
    assertEquals(run.released, { why: "human", atMs: 4500 });
    assertEquals(run.hangUps, []);
  }
});
