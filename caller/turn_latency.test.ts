// End of speech to first bot audio from frame times: the end is the last voiced sample sent (not
// the end of the frame, nor of the turn's trailing silence), the audio is the first loud frame
// received after it; the streaming detector gives one figure per answered utterance and none when
// the caller talks over the bot, coughs, or is never answered.
import { assertEquals } from "../tests/helpers/assert.ts";
import {
  FrameTimes,
  lastVoicedMs,
  percentile,
  summarise,
  TurnLatencyDetector,
} from "./turn_latency.ts";

const FRAME = 960; // 20 ms at 48 kHz

/** A 20 ms frame, voiced (a 1 kHz-ish square of `amp`) for its first `voicedSamples`. */
function frame(voicedSamples: number, amp = 4000): Int16Array {
  const f = new Int16Array(FRAME);
  for (let i = 0; i < voicedSamples; i++) f[i] = (i >> 4) % 2 ? amp : -amp;
  return f;
}

Deno.test("the end of speech is the last voiced sample sent, inside its frame", () => {
  assertEquals(lastVoicedMs(frame(0)), null);
  assertEquals(lastVoicedMs(frame(480)), 10);
  assertEquals(lastVoicedMs(frame(FRAME, 400)), null, "under the speech level is quiet");

  const times = new FrameTimes();
  // 1000 ms: 10 voiced frames, one half-voiced, then trailing silence still sent.
  for (let i = 0; i < 10; i++) times.addSent(1000 + i * 20, frame(FRAME));
  times.addSent(1200, frame(240)); // voiced for its first 5 ms
  for (let i = 11; i < 40; i++) times.addSent(1000 + i * 20, frame(0));
  assertEquals(times.speechEnd(1000), 1205);
  assertEquals(times.speechEnd(1000, 1200), 1200, "only frames sent before `to` count");
  assertEquals(times.speechEnd(1300), null, "nothing voiced after the turn");
});

Deno.test("the first bot audio is the first received frame louder than the level after the end", () => {
  const times = new FrameTimes();
  for (let i = 0; i < 10; i++) times.addSent(1000 + i * 20, frame(FRAME));
  // The bot's previous reply is still arriving before the end, then quiet, then loud at 1690.
  times.addHeard(1150, 2000);
  for (let t = 1210; t < 1690; t += 20) times.addHeard(t, 40);
  times.addHeard(1690, 250); // under the level: comfort noise, not speech
  times.addHeard(1710, 1800);
  const m = times.measure(1000);
  assertEquals(m, { speech_end: 1200, first_audio: 1710, ms: 510 });
  assertEquals(times.firstAudio(1800), null);
  assertEquals(new FrameTimes().measure(0), { speech_end: null, first_audio: null, ms: null });
});

Deno.test("the summary gives p50, p99 and the first turn against the later ones", () => {
  assertEquals(percentile([], 50), NaN);
  assertEquals(percentile([5, 1, 3], 50), 3);
  assertEquals(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 99), 10);
  const s = summarise([900, 400, 420, null, 380]);
  assertEquals(s, { n: 4, missing: 1, p50: 400, p99: 900, first: 900, later_p50: 400 });
  assertEquals(summarise([]).p50, null);
});

/** Feeds the detector 10 ms samples: caller voiced in `speech` spans, bot loud in `bot` spans. */
function run(speech: [number, number][], bot: [number, number][], until: number) {
  const d = new TurnLatencyDetector();
  const inside = (t: number, spans: [number, number][]) => spans.some(([a, b]) => t >= a && t < b);
  for (let t = 0; t < until; t += 10) {
    d.caller(t, inside(t, speech));
    d.bot(t, inside(t, bot));
  }
  return d.turns.map((x) => [x.speech_end, x.first_audio, x.ms]);
}

Deno.test("the detector measures from the last voiced sample to the bot's first loud sample", () => {
  // Speech 1000-2000 (last voiced sample at 1990), the bot answers at 2450.
  assertEquals(run([[1000, 2000]], [[2450, 4000]], 5000), [[1990, 2450, 460]]);
  // A fast reply, before 300 ms of quiet confirm the end: still measured, once.
  assertEquals(run([[1000, 2000]], [[2150, 4000]], 5000), [[1990, 2150, 160]]);
  // Two turns, each answered.
  assertEquals(
    run([[1000, 2000], [5000, 6000]], [[2500, 4000], [6600, 8000]], 9000),
    [[1990, 2500, 510], [5990, 6600, 610]],
  );
});

Deno.test("a pause shorter than the hangover does not end the caller's utterance", () => {
  // 1000-1500, 200 ms of quiet, 1700-2200: one utterance, measured from its real end.
  assertEquals(run([[1000, 1500], [1700, 2200]], [[2700, 4000]], 5000), [[2190, 2700, 510]]);
  // ... even if the bot starts in the pause (then the caller went on: that start is not a reply).
  assertEquals(run([[1000, 1500], [1700, 2200]], [[1600, 1650], [2700, 4000]], 5000), [[
    2190,
    2700,
    510,
  ]]);
});

Deno.test("no figure when the caller talks over the bot, coughs, or is not answered", () => {
  // The bot speaks throughout the caller's words and after: not a reply.
  assertEquals(run([[1000, 2000]], [[500, 4000]], 5000), []);
  // A 60 ms click is not an utterance.
  assertEquals(run([[1000, 1060]], [[1500, 3000]], 4000), []);
  // Never answered within the wait: nothing, and the next turn is measured on its own.
  assertEquals(run([[1000, 2000], [13000, 14000]], [[14500, 15000]], 16000), [[
    13990,
    14500,
    510,
  ]]);
});

Deno.test("a sample's send time is its frame's send time plus its offset in the frame", () => {
  const f = new FrameTimes();
  f.addSent(90, new Int16Array(960)); // before the utterance
  for (let k = 0; k < 5; k++) f.addSent(100 + k * 21, new Int16Array(960)); // a late tick: 21 ms
  assertEquals(f.sampleSentAt(100, 480), 110); // half of the first frame
  assertEquals(f.sampleSentAt(100, 960), 120); // the first frame's last sample
  assertEquals(f.sampleSentAt(100, 961), 121 + 1 / 48); // the second frame's first
  assertEquals(f.sampleSentAt(100, 960 * 5), 100 + 4 * 21 + 20);
  assertEquals(f.sampleSentAt(100, 960 * 5 + 1), null); // not sent (yet)
  assertEquals(f.sampleSentAt(100, 0), null);
});
