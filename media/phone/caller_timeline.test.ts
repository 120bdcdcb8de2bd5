import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { CallerTimeline, COMFORT_NOISE_PT } from "./caller_timeline.ts";
import { g711Encode } from "./g711.ts";
import { buildRtp, parseRtp, type RtpPacket } from "./rtp_packet.ts";

/** A timeline and a way to push packets into it as datagrams, with their arrival times. */
function timeline() {
  const frames: Int16Array[] = [];
  const t = new CallerTimeline({
    law: "PCMU",
    payloadType: 0,
    dtmfPayloadType: 101,
    onFrame: (f) => frames.push(f.slice()),
    onDigit: () => {},
  });
  const push = (
    pt: number,
    seq: number,
    ts: number,
    payload: Uint8Array,
    arrival: number,
    ssrc = 5,
  ) => {
    const d = buildRtp(
      { marker: false, payloadType: pt, sequenceNumber: seq, timestamp: ts, ssrc },
      payload,
    );
    t.push(parseRtp(d) as RtpPacket, d, arrival);
  };
  return { frames, t, push };
}

const loud = (samples: number) =>
  g711Encode("PCMU", new Int16Array(samples).map((_, i) => Math.round(10000 * Math.sin(i / 3))));
const level = (f: Int16Array) => Math.sqrt(f.reduce((s, x) => s + x * x, 0) / f.length);

for (const ptime of [10, 30]) {
  Deno.test(`${ptime} ms packets still give one 320-sample frame per 20 ms`, () => {
    const { frames, t, push } = timeline();
    const n = ptime * 8;
    for (let i = 0; i < 30; i++) push(0, i, i * n, loud(n), i * ptime);
    t.flush();
    t.close();
    assertEquals(frames.length, (30 * ptime) / 20);
    assert(frames.every((f) => f.length === 320));
  });
}

Deno.test("a lost packet is concealed with a fading repeat; a gap after comfort noise is silence", () => {
  const { frames, t, push } = timeline();
  for (let i = 0; i < 10; i++) if (i !== 5) push(0, i, i * 160, loud(160), i * 20);
  push(COMFORT_NOISE_PT, 10, 10 * 160, new Uint8Array([40]), 200);
  for (let i = 20; i < 25; i++) push(0, i - 9, i * 160, loud(160), i * 20);
  t.flush();
  const s = t.stats();
  t.close();
  assertEquals(frames.length, 25);
  // Sequence number 5 never came: one lost, its 20 ms concealed; the comfort noise covers 10.
  assertEquals([s.lost, s.concealedSamples, s.silenceSamples], [1, 160, 10 * 160]);
  assert(level(frames[5]) > 1000, "the concealed frame repeats the sound");
  // The comfort-noise stretch (frames 11-19, after the resampler's 5 ms delay) is silent.
  for (let f = 12; f < 20; f++) assert(level(frames[f]) < 10, `frame ${f} silent`);
});

Deno.test("a timestamp jump is filled only as far as packets have been arriving for, plus a second", () => {
  const { frames, t, push } = timeline();
  push(0, 1, 0, loud(160), 0);
  // 50 s ahead by its timestamp, 20 ms later by the clock: not 2,500 frames at once.
  push(0, 2, 50 * 8000, loud(160), 20);
  t.flush();
  const s = t.stats();
  t.close();
  assertEquals(frames.length, 1 + 50 + 1);
  assertEquals(s.unfilledSamples, 50 * 8000 - 160 - 50 * 160);
});

Deno.test("a new SSRC starts the timeline again without a fill between the two streams", () => {
  const { frames, t, push } = timeline();
  for (let i = 0; i < 5; i++) push(0, 100 + i, 1000 + i * 160, loud(160), i * 20);
  for (let i = 0; i < 5; i++) push(0, 9 + i, 777777 + i * 160, loud(160), 100 + i * 20, 6);
  t.flush();
  const s = t.stats();
  t.close();
  assertEquals([frames.length, s.restarts, s.lost, s.received], [10, 1, 0, 10]);
});
