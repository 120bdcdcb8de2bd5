// The jitter buffer puts the caller's packets back on the caller's timeline: one slot per 20 ms
// frame whatever the network did — lost packets leave a gap slot (carrying the next packet for
// FEC), reordered ones are put in place when the buffer is deep enough and counted late and
// dropped when not, duplicates are dropped, a pause in sending keeps its length, and depth
// follows the measured jitter.
import assert from "node:assert/strict";
import {
  AHEAD_SLACK_FRAMES,
  JitterBuffer,
  MAX_DEPTH,
  type Slot,
  TICKS_PER_FRAME,
} from "./jitter_buffer.ts";

/** Frame i's packet: sequence `seq0 + i`, timestamp i * 960, payload [i]. */
function packet(i: number, seq0 = 1000): [number, number, Uint8Array] {
  return [(seq0 + i) & 0xffff, (i * TICKS_PER_FRAME) >>> 0, Uint8Array.of(i & 0xff)];
}

/** Pushes frames in `order`, arriving every 20 ms (or at the times given); returns all slots. */
function run(b: JitterBuffer, order: number[], at?: (k: number) => number, seq0 = 1000): Slot[] {
  const out: Slot[] = [];
  order.forEach((i, k) => out.push(...b.push(...packet(i, seq0), at ? at(k) : k * 20)));
  return out;
}

const shape = (slots: Slot[]) =>
  slots.map((s) => s.payload ? s.payload[0] : s.next ? `lost>${s.next[0]}` : "lost");

Deno.test("packets in order come out at once, one slot each", () => {
  const b = new JitterBuffer();
  assert.deepEqual(shape(run(b, [0, 1, 2, 3])), [0, 1, 2, 3]);
  assert.equal(b.stats.depth, 0);
});

Deno.test("a lost packet becomes a gap slot carrying the next packet, released when it comes", () => {
  const b = new JitterBuffer();
  assert.deepEqual(shape(run(b, [0, 1, 3, 4, 7, 8])), [
    0,
    1,
    "lost>3",
    3,
    4,
    "lost",
    "lost>7",
    7,
    8,
  ]);
  assert.equal(b.stats.lost, 3);
});

Deno.test("a packet that comes after its slot went is counted late, dropped, and deepens the buffer", () => {
  const b = new JitterBuffer();
  const slots = run(b, [0, 2, 1, 3]);
  assert.deepEqual(shape(slots), [0, "lost>2", 2], "3 is held: the buffer is one deeper");
  assert.equal(b.stats.late, 1);
  assert.equal(b.stats.depth, 1);
  // Now one place of reordering is absorbed: 5 before 4 and both are played in order.
  assert.deepEqual(shape(run(b, [5, 4, 6], (k) => 80 + k * 20)), [3, 4, 5]);
  assert.equal(b.stats.late, 1);
  assert.deepEqual(shape(b.flush()), [6]);
});

Deno.test("duplicates are counted and dropped, held or already played", () => {
  const b = new JitterBuffer();
  assert.deepEqual(shape(run(b, [0, 1, 1, 2, 0])), [0, 1, 2]);
  assert.equal(b.stats.duplicates, 2);
  assert.equal(b.stats.late, 0);
});

Deno.test("depth follows the measured jitter and reordering within it costs nothing", () => {
  const b = new JitterBuffer();
  // Arrivals 0, 60, 20, 80, 40 ms ... late by up to 40 ms: jitter of tens of ms.
  const wobble = (k: number) => k * 20 + (k % 3 === 1 ? 40 : 0);
  const order = Array.from({ length: 60 }, (_, i) => i);
  const slots = run(b, order, wobble);
  assert.ok(b.stats.jitterMs > 10, `jitter ${b.stats.jitterMs}`);
  assert.ok(b.stats.depth >= 1 && b.stats.depth <= MAX_DEPTH, `depth ${b.stats.depth}`);
  // A swap of two packets now is put right.
  const more = run(b, [61, 60, 62, 63, 64, 65, 66, 67], (k) => 1200 + k * 20);
  const all = [...slots, ...more, ...b.flush()];
  assert.deepEqual(shape(all), Array.from({ length: 68 }, (_, i) => i));
  assert.equal(b.stats.late, 0);
});

Deno.test("a pause in sending keeps its length on the timeline", () => {
  const b = new JitterBuffer();
  const out: Slot[] = [];
  out.push(...b.push(1, 0, Uint8Array.of(0), 0));
  // Next sequence number, but 5 frames of time later (the caller stopped sending for 80 ms).
  out.push(...b.push(2, 5 * TICKS_PER_FRAME, Uint8Array.of(5), 100));
  assert.deepEqual(shape(out), [0, "lost", "lost", "lost", "lost", 5]);
});

Deno.test("sequence numbers wrapping at 65535 keep their order", () => {
  const b = new JitterBuffer();
  assert.deepEqual(shape(run(b, [0, 1, 2, 4, 3, 5], undefined, 65533)), [0, 1, 2, "lost>4", 4]);
  assert.equal(b.stats.late, 1);
  assert.deepEqual(shape(b.flush()), [5]);
});

Deno.test("a jump of the sequence too large to be loss starts the timeline afresh", () => {
  const b = new JitterBuffer();
  run(b, [0, 1, 2]);
  const slots = b.push(30000, 3 * TICKS_PER_FRAME, Uint8Array.of(9), 60);
  assert.deepEqual(shape(slots), [9], "no thousands of gap slots");
  assert.equal(b.stats.restarts, 1);
  assert.equal(b.stats.lost, 0);
});

Deno.test("depth gained from late packets is given back after 5 s without one", () => {
  const b = new JitterBuffer();
  run(b, [0, 2, 1]);
  assert.equal(b.stats.depth, 1);
  const order = Array.from({ length: 300 }, (_, i) => i + 3);
  run(b, order, (k) => 60 + k * 20);
  assert.equal(b.stats.depth, 0);
});

Deno.test("a caller cannot make the timeline run ahead of the clock with jumps", () => {
  const b = new JitterBuffer();
  let slots = 0;
  // Every packet 400 sequence numbers on (under the restart bound) and 240 frames of time later.
  for (let k = 0; k < 50; k++) {
    const seq = (1000 + k * 400) & 0xffff;
    slots += b.push(seq, (k * 240 * TICKS_PER_FRAME) >>> 0, Uint8Array.of(k), k * 20).length;
  }
  // 50 packets over 1 s of arrivals: at most 1 s of frames plus the slack, not 20,000 frames.
  assert.ok(slots <= 50 + AHEAD_SLACK_FRAMES + 1, `${slots} slots`);
  assert.ok(b.stats.unfilled > 1000, JSON.stringify(b.stats));
});
