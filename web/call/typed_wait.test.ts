// A typed line's wait: sent to the first bot audio after it; none when sent over the bot, when
// nothing answers in time, or when a newer line cut its reply.
import assert from "node:assert/strict";
import { TYPED_MAX_WAIT_MS, type TypedOutcome, TypedWaits } from "./typed_wait.ts";

/** Bot samples every 10 ms from `from` to `to`, loud where `loud(t)`. */
function feed(w: TypedWaits, from: number, to: number, loud: (t: number) => boolean) {
  for (let t = from; t < to; t += 10) w.bot(t, loud(t));
}

Deno.test("a typed line sent while the bot is quiet waits until its first audio", () => {
  const seen: TypedOutcome[] = [];
  const w = new TypedWaits((o) => seen.push(o));
  feed(w, 0, 1000, (t) => t < 500); // the greeting, then quiet
  w.sent(1005, "opening hours");
  feed(w, 1010, 3000, (t) => t >= 1650);
  assert.deepEqual(seen, [{ text: "opening hours", ms: 645 }]);
});

Deno.test("a typed line sent over the bot gets no figure, and the next one does", () => {
  const seen: TypedOutcome[] = [];
  const w = new TypedWaits((o) => seen.push(o));
  feed(w, 0, 1000, () => true); // the bot is speaking
  w.sent(1000, "stop");
  feed(w, 1000, 2000, (t) => t < 1100 || t >= 1600);
  assert.deepEqual(seen, [{ text: "stop", ms: null, why: "sent over the bot" }]);
  feed(w, 2000, 2500, () => false);
  w.sent(2500, "again");
  feed(w, 2500, 3000, (t) => t >= 2900);
  assert.deepEqual(seen[1], { text: "again", ms: 400 });
});

Deno.test("a line not answered in time, or superseded, gets no figure", () => {
  const seen: TypedOutcome[] = [];
  const w = new TypedWaits((o) => seen.push(o));
  w.sent(0, "first");
  w.sent(100, "second");
  feed(w, 100, 200 + TYPED_MAX_WAIT_MS, () => false);
  assert.deepEqual(seen, [
    { text: "first", ms: null, why: "superseded" },
    { text: "second", ms: null, why: "no answer heard" },
  ]);
});
