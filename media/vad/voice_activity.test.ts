import assert from "node:assert/strict";
import { sileroModel } from "./silero.ts";
import { throughOpus } from "../../tests/helpers/audio.ts";
import { type VadEvent, type VadFrame, type VadSettings, VoiceActivity } from "./voice_activity.ts";
import {
  concat,
  mix,
  pinkNoise,
  silence,
  speech16k,
  speech48k,
  speechBounds,
  tone,
  whiteNoise,
} from "../../tests/helpers/test_signals.ts";

const SENTENCES = [
  "Hello there, I would like to book a table for two people tonight.",
  "Yes.",
  "Cancel my order please",
];

interface Run {
  events: VadEvent[];
  frames: VadFrame[];
}

/** Pushes `pcm` in `chunk`-sample pieces (320 = one 20 ms packet at 16 kHz), one at a time. */
async function runVad(pcm: Int16Array, settings: VadSettings = {}, chunk = 320): Promise<Run> {
  const frames: VadFrame[] = [];
  const vad = new VoiceActivity(await sileroModel(), settings, { onFrame: (f) => frames.push(f) });
  const events: VadEvent[] = [];
  for (let i = 0; i < pcm.length; i += chunk) {
    events.push(...await vad.push(pcm.subarray(i, i + chunk)));
  }
  vad.close();
  return { events, frames };
}

/** Checks one turn against where the audio really has speech. */
function assertOneTurn(
  events: VadEvent[],
  pcm: Int16Array,
  startMs: number,
  stopMs: number,
  label: string,
) {
  const { onsetMs, offsetMs } = speechBounds(pcm);
  assert.deepEqual(events.map((e) => e.type), ["speech_start", "speech_end"], label);
  const [start, end] = events;
  assert(start.type === "speech_start" && end.type === "speech_end");
  assert(start.atMs > onsetMs, `${label}: start ${start.atMs} before onset ${onsetMs}`);
  assert(
    start.atMs <= onsetMs + startMs + 64,
    `${label}: start at ${start.atMs}, onset ${onsetMs}, startMs ${startMs}`,
  );
  assert(start.atMs - start.onsetMs >= startMs - 16, `${label}: run shorter than startMs`);
  assert(
    Math.abs(start.onsetMs - onsetMs) <= 64,
    `${label}: onset ${start.onsetMs} vs ${onsetMs}`,
  );
  assert(end.atMs >= offsetMs + stopMs, `${label}: end ${end.atMs} before ${offsetMs}+${stopMs}`);
  assert(
    end.atMs <= offsetMs + stopMs + 128,
    `${label}: end ${end.atMs} late after offset ${offsetMs}`,
  );
  assert(
    Math.abs(end.speechMs - (offsetMs - onsetMs)) <= 128,
    `${label}: speechMs ${end.speechMs} vs ${offsetMs - onsetMs}`,
  );
}

Deno.test("speech starts within startMs + 64 ms of its onset and ends stopMs after it stops", async () => {
  for (const text of SENTENCES) {
    const pcm = concat(await speech16k(text, 0.5), silence(1000));
    assertOneTurn((await runVad(pcm)).events, pcm, 200, 600, text);
    // The same with the silence gate off: the model alone decides every frame.
    const ungated = await runVad(pcm, { silenceFloorDbfs: -Infinity });
    assertOneTurn(ungated.events, pcm, 200, 600, `${text} (ungated)`);
  }
});

Deno.test("startMs and stopMs are honoured when set", async () => {
  const pcm = concat(await speech16k(SENTENCES[0], 0.5), silence(1200));
  assertOneTurn((await runVad(pcm, { startMs: 320, stopMs: 800 })).events, pcm, 320, 800, "long");
  assertOneTurn((await runVad(pcm, { startMs: 96, stopMs: 500 })).events, pcm, 96, 500, "short");
});

Deno.test("speech that went through Opus (48 kHz in, 16 kHz out) is detected the same way", async () => {
  for (const text of SENTENCES) {
    const pcm = concat(throughOpus(await speech48k(text, 0.5)), silence(1000));
    assertOneTurn((await runVad(pcm)).events, pcm, 200, 600, `${text} (opus)`);
  }
});

Deno.test("speech over pink noise at -40 dBFS still starts on time", async () => {
  const clean = concat(await speech16k(SENTENCES[2], 0.5), silence(1000));
  const noisy = mix(clean, pinkNoise(clean.length / 16, -40));
  const { events } = await runVad(noisy);
  const { onsetMs } = speechBounds(clean);
  assert.equal(events.filter((e) => e.type === "speech_start").length, 1);
  assert(events[0].type === "speech_start" && events[0].atMs <= onsetMs + 264);
  assert.equal(events.at(-1)?.type, "speech_end");
});

Deno.test("a pause shorter than stopMs keeps one turn; a longer one makes two", async () => {
  // Trimmed to the speech itself, so the gaps below are the real pauses.
  const trim = (pcm: Int16Array) => {
    const { onsetMs, offsetMs } = speechBounds(pcm);
    return pcm.subarray(onsetMs * 16, Math.ceil(offsetMs * 16));
  };
  const a = trim(await speech16k("Book a table", 0));
  const b = trim(await speech16k("for tomorrow evening", 0));
  const short = concat(silence(500), a, silence(400), b, silence(1000));
  assert.deepEqual((await runVad(short)).events.map((e) => e.type), [
    "speech_start",
    "speech_end",
  ]);
  const long = concat(silence(500), a, silence(1000), b, silence(1000));
  const { events } = await runVad(long);
  assert.deepEqual(events.map((e) => e.type), [
    "speech_start",
    "speech_end",
    "speech_start",
    "speech_end",
  ]);
  // The second turn starts near the second sentence's onset, not carried over from the first.
  const secondOnset = 500 + a.length / 16 + 1000;
  assert(events[2].type === "speech_start");
  assert(events[2].atMs > secondOnset && events[2].atMs <= secondOnset + 264, `${events[2].atMs}`);
});

/**
 * The rules, checked frame by frame against the model's own probabilities (from onFrame):
 * a turn starts after round(startMs / 32) frames all >= positive; its silence run begins at a
 * frame < negative, holds no frame >= positive, and lasts round(stopMs / 32) frames; no earlier
 * window in the turn qualified; between turns no run of frames >= positive was long enough.
 */
function assertRules(
  run: Run,
  s: Required<Pick<VadSettings, "positiveThreshold" | "negativeThreshold" | "startMs" | "stopMs">>,
) {
  const p = run.frames.map((f) => f.probability);
  const at = (ms: number) => ms / 32;
  const startN = Math.max(1, Math.round(s.startMs / 32)),
    stopN = Math.max(1, Math.round(s.stopMs / 32));
  const quietRunOk = (from: number, to: number) => {
    let n = 0;
    for (let k = from; k < to; k++) {
      n = p[k] >= s.positiveThreshold ? n + 1 : 0;
      assert(n < startN, `speech run of ${n} frames at frame ${k} did not start a turn`);
    }
  };
  let quietFrom = 0;
  for (let e = 0; e < run.events.length; e += 2) {
    const start = run.events[e], end = run.events[e + 1];
    assert(start.type === "speech_start");
    const k0 = at(start.onsetMs), k1 = at(start.atMs);
    assert.equal(k1 - k0, startN);
    assert(p.slice(k0, k1).every((v) => v >= s.positiveThreshold), `start run ${k0}..${k1}`);
    quietRunOk(quietFrom, k1 - 1);
    if (!end) break;
    assert(end.type === "speech_end");
    const s0 = at(start.onsetMs + end.speechMs), s1 = at(end.atMs);
    assert.equal(s1 - s0, stopN);
    assert(p[s0] < s.negativeThreshold, `silence run starts at frame ${s0} with p=${p[s0]}`);
    assert(p.slice(s0, s1).every((v) => v < s.positiveThreshold), `silence run ${s0}..${s1}`);
    for (let k = k1; k < s0; k++) {
      if (p[k] >= s.negativeThreshold || (k > k1 && p[k - 1] < s.negativeThreshold)) continue;
      const window = p.slice(k, k + stopN);
      assert(
        window.some((v) => v >= s.positiveThreshold),
        `turn should have ended from frame ${k}`,
      );
    }
    quietFrom = s1;
  }
  if (run.events.length % 2 === 0) quietRunOk(quietFrom, p.length);
}

Deno.test("events follow the start/stop rules frame by frame, thresholds included", async () => {
  const texts = ["Cancel my order please", "Hello there, I would like to book a table."];
  for (const text of texts) {
    const clean = concat(await speech16k(text, 0.5), silence(1000));
    // Noise makes many frames fall between the two thresholds.
    for (
      const noise of [null, pinkNoise(clean.length / 16, -30), whiteNoise(clean.length / 16, -25)]
    ) {
      const pcm = noise ? mix(clean, noise) : clean;
      for (
        const settings of [
          { positiveThreshold: 0.5, negativeThreshold: 0.35, startMs: 200, stopMs: 600 },
          { positiveThreshold: 0.9, negativeThreshold: 0.2, startMs: 64, stopMs: 300 },
          { positiveThreshold: 0.6, negativeThreshold: 0.6, startMs: 100, stopMs: 150 },
        ]
      ) {
        const run = await runVad(pcm, { ...settings, silenceFloorDbfs: -Infinity });
        assert(run.events.length >= 2, `${text} ${JSON.stringify(settings)}: no turn`);
        assertRules(run, settings);
      }
    }
  }
});

Deno.test("silence, white and pink noise and a 440 Hz tone never start speech", async () => {
  const ungated = { silenceFloorDbfs: -Infinity };
  const cases: [string, Int16Array][] = [["digital silence", silence(3000)]];
  for (const db of [-60, -40, -20, -10]) {
    cases.push([`white ${db} dBFS`, whiteNoise(4000, db)], [
      `pink ${db} dBFS`,
      pinkNoise(4000, db),
    ]);
  }
  for (const db of [-30, -10]) cases.push([`440 Hz ${db} dBFS`, tone(3000, 440, db)]);
  // Abrupt onsets are the hard case for a VAD: a tone that starts mid-stream.
  cases.push(["440 Hz after silence", concat(silence(1000), tone(2000, 440, -6))]);
  for (const [label, pcm] of cases) {
    for (const settings of [{}, ungated, { ...ungated, startMs: 64 }]) {
      const { events, frames } = await runVad(pcm, settings);
      assert.deepEqual(events, [], `${label} ${JSON.stringify(settings)}`);
      assert.equal(frames.length, Math.floor(pcm.length / 512));
    }
  }
});

Deno.test("setStartMs(64) detects a barge-in within 128 ms of its onset, live", async () => {
  const pcm = concat(await speech16k("No, wait, stop!", 0.5), silence(800));
  const { onsetMs } = speechBounds(pcm);
  const vad = new VoiceActivity(await sileroModel());
  const events: VadEvent[] = [];
  // The bot starts speaking 300 ms in: the worker shortens the window from then on.
  for (let i = 0; i < pcm.length; i += 320) {
    if (i === 300 * 16) vad.setStartMs(64);
    events.push(...await vad.push(pcm.subarray(i, i + 320)));
  }
  assert.equal(vad.settings.startMs, 64);
  const start = events[0];
  assert(start?.type === "speech_start", JSON.stringify(events));
  assert.equal(start.atMs - start.onsetMs, 64);
  assert(start.atMs > onsetMs && start.atMs <= onsetMs + 128, `${start.atMs} vs ${onsetMs}`);
  const normal = (await runVad(pcm)).events[0];
  assert(normal.type === "speech_start" && normal.atMs >= start.atMs + 96);
});

Deno.test("chunk size does not change frames or events", async () => {
  const pcm = concat(await speech16k(SENTENCES[2], 0.5), silence(800), whiteNoise(300, -30));
  const reference = await runVad(pcm, {}, 320);
  for (const chunk of [1, 17, 512, 960, 5000]) {
    const run = await runVad(pcm, {}, chunk);
    assert.deepEqual(run.events, reference.events, `chunk ${chunk}`);
    assert.deepEqual(run.frames, reference.frames, `chunk ${chunk}`);
  }
});

Deno.test("pushes made without awaiting are decided in order, one inference at a time", async () => {
  const pcm = concat(await speech16k(SENTENCES[1], 0.5), silence(800));
  const reference = await runVad(pcm);
  const vad = new VoiceActivity(await sileroModel());
  const pending: Promise<VadEvent[]>[] = [];
  const reused = new Int16Array(320);
  for (let i = 0; i < pcm.length; i += 320) {
    // Like OpusDecoder.decode(), the caller reuses its buffer: push must copy before returning.
    reused.fill(0);
    reused.set(pcm.subarray(i, i + 320));
    pending.push(vad.push(reused.subarray(0, Math.min(320, pcm.length - i))));
  }
  assert.deepEqual((await Promise.all(pending)).flat(), reference.events);
});

Deno.test("two streams on one model keep separate state: interleaved equals separate", async () => {
  const a = concat(await speech16k(SENTENCES[0], 0.5), silence(800));
  const b = concat(silence(700), await speech16k(SENTENCES[2], 0.3), pinkNoise(900, -45));
  const alone = [await runVad(a), await runVad(b)];
  const model = await sileroModel();
  const framesA: VadFrame[] = [], framesB: VadFrame[] = [];
  const vadA = new VoiceActivity(model, {}, { onFrame: (f) => framesA.push(f) });
  const vadB = new VoiceActivity(model, {}, { onFrame: (f) => framesB.push(f) });
  const eventsA: VadEvent[] = [], eventsB: VadEvent[] = [];
  // Both in flight at once, as two calls in one worker are.
  for (let i = 0; i < Math.max(a.length, b.length); i += 320) {
    const [ea, eb] = await Promise.all([
      i < a.length ? vadA.push(a.subarray(i, i + 320)) : [],
      i < b.length ? vadB.push(b.subarray(i, i + 320)) : [],
    ]);
    eventsA.push(...ea);
    eventsB.push(...eb);
  }
  assert.deepEqual(eventsA, alone[0].events);
  assert.deepEqual(eventsB, alone[1].events);
  assert.deepEqual(framesA, alone[0].frames);
  assert.deepEqual(framesB, alone[1].frames);
});

Deno.test("inSpeech is true between speech_start and speech_end", async () => {
  const pcm = concat(await speech16k(SENTENCES[1], 0.5), silence(1000));
  const vad = new VoiceActivity(await sileroModel());
  const seen: string[] = [];
  for (let i = 0; i < pcm.length; i += 320) {
    for (const e of await vad.push(pcm.subarray(i, i + 320))) {
      seen.push(`${e.type}:${vad.inSpeech}`);
    }
    if (seen.length === 1) assert.equal(vad.inSpeech, true);
  }
  assert.deepEqual(seen, ["speech_start:true", "speech_end:false"]);
  assert.equal(vad.inSpeech, false);
});

Deno.test("processedMs is the audio time of the whole frames decided, and every event falls in it", async () => {
  const pcm = concat(await speech16k(SENTENCES[0], 0.5), silence(700));
  const vad = new VoiceActivity(await sileroModel());
  const events: VadEvent[] = [];
  assert.equal(vad.processedMs, 0);
  for (let i = 0; i < pcm.length; i += 320) {
    const pushed = Math.min(pcm.length, i + 320);
    for (const e of await vad.push(pcm.subarray(i, i + 320))) {
      assert(e.atMs <= vad.processedMs, `${e.type} at ${e.atMs} after ${vad.processedMs}`);
      events.push(e);
    }
    // A partial frame waits for the next push: only whole 512-sample frames count.
    assert.equal(vad.processedMs, Math.floor(pushed / 512) * 32);
  }
  assert.deepEqual(events.map((e) => e.type), ["speech_start", "speech_end"]);
});

Deno.test("frames below the silence floor are not run through the model", async () => {
  const pcm = concat(silence(640), whiteNoise(640, -65), whiteNoise(640, -50));
  const { frames } = await runVad(pcm);
  assert.deepEqual(frames.map((f) => f.gated), [
    ...Array(40).fill(true),
    ...Array(20).fill(false),
  ]);
  assert(frames.slice(0, 40).every((f) => f.probability === 0));
  const ungated = await runVad(pcm, { silenceFloorDbfs: -Infinity });
  assert(ungated.frames.every((f) => !f.gated));
});

Deno.test("configure validates and applies settings; push after close is refused", async () => {
  const vad = new VoiceActivity(await sileroModel(), { stopMs: 800 });
  assert.deepEqual(vad.settings, {
    positiveThreshold: 0.5,
    negativeThreshold: 0.35,
    startMs: 200,
    stopMs: 800,
    pauseMs: 0,
    silenceFloorDbfs: -60,
  });
  assert.throws(() => vad.configure({ positiveThreshold: 1.5 }), RangeError);
  assert.throws(() => vad.configure({ pauseMs: -1 }), RangeError);
  assert.throws(() => vad.configure({ negativeThreshold: 0.6 }), RangeError);
  assert.throws(() => vad.configure({ stopMs: -1 }), RangeError);
  assert.equal(vad.settings.stopMs, 800);
  vad.configure({ positiveThreshold: 0.7, negativeThreshold: 0.6 });
  assert.equal(vad.settings.negativeThreshold, 0.6);
  vad.close();
  await assert.rejects(vad.push(new Int16Array(320)), /closed/);
});

Deno.test("with pauseMs a short silence is reported as a pause and speech after it as a resume", async () => {
  const trim = (pcm: Int16Array) => {
    const { onsetMs, offsetMs } = speechBounds(pcm);
    return pcm.subarray(onsetMs * 16, Math.ceil(offsetMs * 16));
  };
  const a = trim(await speech16k("Book a table", 0));
  const b = trim(await speech16k("for tomorrow evening", 0));
  const pcm = concat(silence(500), a, silence(400), b, silence(1000));
  const { events } = await runVad(pcm, { pauseMs: 160 });
  // Without pauseMs the same audio gives only speech_start and speech_end (test above).
  assert.deepEqual(events.map((e) => e.type), [
    "speech_start",
    "pause",
    "resume",
    "pause",
    "speech_end",
  ]);
  const [, pause, resume, lastPause, end] = events;
  assert(pause.type === "pause" && resume.type === "resume" && lastPause.type === "pause");
  assert(end.type === "speech_end");
  // Reported once the silence covers pauseMs (5 frames), not before.
  assert.equal(pause.atMs - pause.silenceStartMs, 160);
  const gapStart = 500 + a.length / 16;
  assert(Math.abs(pause.silenceStartMs - gapStart) <= 96, `${pause.silenceStartMs} vs ${gapStart}`);
  assert(
    Math.abs(resume.pauseMs - 400) <= 128,
    `pause of ${resume.pauseMs} ms, 400 ms in the audio`,
  );
  assert.equal(resume.onsetMs, resume.atMs - 32);
  // The turn still ends at stopMs after the last pause began: speech_end stays the upper bound.
  assert.equal(end.atMs - lastPause.silenceStartMs, 608);
});

Deno.test("endSpeech() closes the utterance: no speech_end, and the next speech starts afresh", async () => {
  const words = await speech16k("Yes.", 0);
  const pcm = concat(silence(300), words, silence(700), words, silence(1000));
  const vad = new VoiceActivity(await sileroModel(), { pauseMs: 160, stopMs: 2000 });
  const events: VadEvent[] = [];
  for (let i = 0; i < pcm.length; i += 320) {
    for (const e of await vad.push(pcm.subarray(i, i + 320))) {
      events.push(e);
      // The turn-taking machine ends the turn at the first pause.
      if (e.type === "pause") vad.endSpeech();
    }
  }
  vad.close();
  assert.deepEqual(events.map((e) => e.type), [
    "speech_start",
    "pause",
    "speech_start",
    "pause",
  ]);
  assert.equal(vad.inSpeech, false);
});
