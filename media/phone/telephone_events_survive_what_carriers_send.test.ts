// RFC 4733 events as carriers really send them, through the caller's timeline (jitter buffer and
// all): no marker bit on the first packet (livekit/sip #585), the three end packets repeated
// more or all lost, packets reordered or the start lost, a long event in segments, and several
// events in one packet in the RFC 2198 redundancy format. Each press reaches onDigit once.
import { assertEquals } from "../../tests/helpers/assert.ts";
import { CallerTimeline } from "./caller_timeline.ts";
import { g711Encode } from "./g711.ts";
import type { DtmfDigit } from "./line.ts";
import { buildRtp, parseRtp, type RtpPacket } from "./rtp_packet.ts";
import { redundantBlocks } from "./telephone_event.ts";

const EVENT = 101, RED = 99;
const KEYS = "0123456789*#ABCD";

const body = (key: string, end: boolean, duration: number) =>
  new Uint8Array([KEYS.indexOf(key), (end ? 0x80 : 0) | 10, duration >> 8, duration & 0xff]);

interface Sent {
  pt: number;
  ts: number;
  payload: Uint8Array;
  marker?: boolean;
}

/** A caller: 20 ms of audio packets, and a key's event packets every 20 ms, with sequence numbers. */
function caller() {
  const packets: Sent[] = [];
  let ts = 0;
  const audio = (frames: number) => {
    for (let i = 0; i < frames; i++, ts += 160) {
      packets.push({ pt: 0, ts, payload: g711Encode("PCMU", new Int16Array(160)) });
    }
  };
  /** A press of `ms` (a multiple of 20); its packets as a carrier sends them, before `shape`. */
  const press = (key: string, ms: number, ends = 3, marker = false) => {
    const start = ts, n = ms / 20;
    for (let i = 1; i <= n; i++) {
      const end = i === n;
      const copies = end ? ends : 1;
      for (let c = 0; c < copies; c++) {
        packets.push({
          pt: EVENT,
          ts: start,
          payload: body(key, end, i * 160),
          marker: marker && i === 1,
        });
      }
    }
    ts += ms * 8;
  };
  return { packets, audio, press, at: () => ts };
}

function hear(packets: Sent[], options: { red?: boolean } = {}) {
  const digits: DtmfDigit[] = [];
  const t = new CallerTimeline({
    law: "PCMU",
    payloadType: 0,
    dtmfPayloadType: EVENT,
    redPayloadType: options.red ? RED : undefined,
    onFrame: () => {},
    onDigit: (d) => digits.push(d),
  });
  packets.forEach((p, i) => {
    const d = buildRtp({
      marker: p.marker ?? false,
      payloadType: p.pt,
      sequenceNumber: (40000 + i) & 0xffff,
      timestamp: p.ts,
      ssrc: 77,
    }, p.payload);
    t.push(parseRtp(d) as RtpPacket, d, i * 20);
  });
  t.flush();
  t.close();
  return digits;
}

const keys = (ds: DtmfDigit[]) => ds.map((d) => d.digit).join("");

Deno.test("keys whose first packet has no marker bit reach the brain once each", () => {
  const c = caller();
  c.audio(5);
  for (const k of "1234#") c.press(k, 100), c.audio(3);
  assertEquals(keys(hear(c.packets)), "1234#");
  // The same with the marker set, as the RFC asks: no difference.
  const m = caller();
  m.audio(5);
  for (const k of "1234#") m.press(k, 100, 3, true), m.audio(3);
  assertEquals(hear(m.packets), hear(c.packets));
});

Deno.test("end packets repeated six times, or all lost, still give one key per press", () => {
  const c = caller();
  c.audio(3);
  c.press("5", 80, 6);
  c.audio(10);
  c.press("6", 80, 0); // every end packet lost, then audio: reported once the audio runs past
  c.audio(10);
  c.press("7", 80, 0); // lost ends, then straight into the next key
  c.press("8", 60, 3);
  c.audio(10);
  const digits = hear(c.packets);
  assertEquals(keys(digits), "5678");
  assertEquals(digits[0].durationMs, 80);
});

Deno.test("reordered packets and a lost start packet give each key once, at its full length", () => {
  const c = caller();
  c.audio(3);
  c.press("9", 120);
  c.audio(5);
  c.press("0", 100);
  c.audio(10);
  const p = c.packets;
  // The first event's start packet is lost; its second and third packets swap places.
  const first = p.findIndex((x) => x.pt === EVENT);
  const shaped = [...p.slice(0, first), p[first + 2], p[first + 1], ...p.slice(first + 3)];
  // (Numbered as shaped: the sender's own order was wrong, which no jitter buffer can undo.)
  const digits = hear(shaped);
  assertEquals(keys(digits), "90");
  assertEquals(digits.map((d) => d.durationMs), [120, 100]);
});

Deno.test("packets that arrive out of sequence order are put back by the jitter buffer", () => {
  const c = caller();
  c.audio(3);
  c.press("3", 100);
  c.audio(3);
  c.press("3", 100);
  c.audio(8);
  const digits: DtmfDigit[] = [];
  const t = new CallerTimeline({
    law: "PCMU",
    payloadType: 0,
    dtmfPayloadType: EVENT,
    onFrame: () => {},
    onDigit: (d) => digits.push(d),
  });
  const datagrams = c.packets.map((p, i) =>
    buildRtp(
      { marker: false, payloadType: p.pt, sequenceNumber: i, timestamp: p.ts, ssrc: 9 },
      p.payload,
    )
  );
  // Every pair swapped in flight.
  for (let i = 0; i + 1 < datagrams.length; i += 2) {
    [datagrams[i], datagrams[i + 1]] = [datagrams[i + 1], datagrams[i]];
  }
  datagrams.forEach((d, i) => t.push(parseRtp(d) as RtpPacket, d, i * 20));
  t.flush();
  t.close();
  assertEquals(keys(digits), "33");
});

Deno.test("a press longer than one event's 16-bit duration, sent in segments, is one key", () => {
  const c = caller();
  c.audio(2);
  const start = c.at();
  const packets = [...c.packets];
  // Segment one runs to 65535 ticks; segment two starts where it ended and ends the event.
  packets.push({ pt: EVENT, ts: start, payload: body("#", false, 32000) });
  packets.push({ pt: EVENT, ts: start, payload: body("#", false, 65535) });
  packets.push({ pt: EVENT, ts: start + 65535, payload: body("#", false, 800) });
  for (let i = 0; i < 3; i++) {
    packets.push({ pt: EVENT, ts: start + 65535, payload: body("#", true, 1600) });
  }
  const digits = hear(packets);
  assertEquals(keys(digits), "#");
  assertEquals(digits[0].durationMs, (65535 + 1600) / 8);
});

/** An RFC 2198 packet: redundant blocks (older events) then the primary, at `ts`. */
function red(ts: number, blocks: { ts: number; payload: Uint8Array }[], primary: Uint8Array) {
  const heads = blocks.flatMap((b) => {
    const offset = ts - b.ts, length = b.payload.length;
    return [0x80 | EVENT, offset >> 6, ((offset & 0x3f) << 2) | (length >> 8), length & 0xff];
  });
  return new Uint8Array([...heads, EVENT, ...blocks.flatMap((b) => [...b.payload]), ...primary]);
}

Deno.test("several events packed in one RFC 2198 packet each reach the brain once", () => {
  // A dialler sends 1, 2, 3 back to back; each packet also carries the ends of the earlier ones.
  const ends = [
    { ts: 1000, payload: body("1", true, 400) },
    { ts: 1400, payload: body("2", true, 400) },
    { ts: 1800, payload: body("3", true, 400) },
  ];
  const packets: Sent[] = [{ pt: 0, ts: 0, payload: g711Encode("PCMU", new Int16Array(160)) }];
  packets.push({ pt: RED, ts: 1000, payload: red(1000, [], ends[0].payload) });
  packets.push({ pt: RED, ts: 1400, payload: red(1400, [ends[0]], ends[1].payload) });
  packets.push({ pt: RED, ts: 1800, payload: red(1800, ends.slice(0, 2), ends[2].payload) });
  packets.push({ pt: RED, ts: 1800, payload: red(1800, ends.slice(0, 2), ends[2].payload) });
  assertEquals(keys(hear(packets, { red: true })), "123");
  // The first packet lost: its key comes from the next packet's redundant block.
  assertEquals(keys(hear([packets[0], ...packets.slice(2)], { red: true })), "123");
});

Deno.test("a malformed redundancy payload gives no block", () => {
  assertEquals(redundantBlocks(0, new Uint8Array([0x80 | EVENT, 0, 0])), []);
  assertEquals(redundantBlocks(0, new Uint8Array([0x80 | EVENT, 0, 0, 9, EVENT, 1])), []);
  assertEquals(redundantBlocks(0, new Uint8Array([])), []);
});
