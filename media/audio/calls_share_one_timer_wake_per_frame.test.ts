import assert from "node:assert/strict";
import { FrameClock } from "./frame_clock.ts";
import { Pacer } from "./pacer.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// A worker's calls all send a frame every 20 ms. On one clock they cost one timer wake per frame
// between them, not one each.
Deno.test("pacers on one clock tick on its wakes: one wake per frame for all of them", async () => {
  const clock = new FrameClock();
  const seen: { id: number; frame: number; at: number }[] = [];
  const pacers = [0, 1, 2, 3, 4, 5, 6, 7].map((id) =>
    new Pacer((t) => void seen.push({ id, frame: t.frame, at: t.scheduledAt }), { clock })
  );
  pacers.forEach((p) => p.start());
  await sleep(410);
  // One joins late: its frame 0 is the clock's next due frame, on the same grid.
  const late = new Pacer((t) => void seen.push({ id: 8, frame: t.frame, at: t.scheduledAt }), {
    clock,
  });
  late.start();
  await sleep(410);
  for (const p of [...pacers, late]) p.stop();
  assert.equal(clock.listeners, 0);

  const ticks = pacers.map((p) => p.ticks);
  assert.ok(Math.min(...ticks) >= 20, `ticks ${ticks}`);
  // Catch-up wakes after a stall tick everyone too, so wakes never exceed one pacer's ticks.
  assert.ok(clock.wakes <= Math.max(...ticks), `${clock.wakes} wakes, ticks ${ticks}`);
  for (let id = 0; id < 8; id++) {
    const mine = seen.filter((s) => s.id === id);
    assert.deepEqual(mine.map((s) => s.frame).slice(0, 5), [0, 1, 2, 3, 4]);
  }
  // Every pacer's frame n was due at the same instant as the others' frame n.
  const dueOf = (id: number, frame: number) =>
    seen.find((s) => s.id === id && s.frame === frame)?.at;
  for (let id = 1; id < 8; id++) assert.equal(dueOf(id, 10), dueOf(0, 10));
  const lateFirst = seen.find((s) => s.id === 8)!;
  assert.equal(lateFirst.frame, 0);
  assert.ok(
    seen.some((s) => s.id === 0 && s.at === lateFirst.at),
    "the late pacer's first frame is on the others' grid",
  );
});

Deno.test("a pacer leaving from inside a tick and another joining keep the clock running", async () => {
  const clock = new FrameClock();
  let joinedTicks = 0;
  const joined = new Pacer(() => void joinedTicks++, { clock });
  const leaving = new Pacer((t) => {
    if (t.frame === 3) {
      leaving.stop(); // the last listener leaves mid-wake...
      joined.start(); // ...and a new one joins in the same wake
    }
  }, { clock });
  leaving.start();
  await sleep(300);
  assert.equal(leaving.ticks, 4);
  assert.ok(joinedTicks >= 5, `joined ticked ${joinedTicks} times`);
  joined.stop();
  assert.equal(clock.listeners, 0);
});
