// The brain's liveness, on a clock of the test's own: a quiet brain is pinged every third of the
// bound and kept while anything (a pong) comes back; one that sends nothing is reported silent at
// two thirds (the page's warning) and unresponsive at the bound (the call's end), once; bytes
// after the warning are noted; 0 turns it all off. The whole call is
// tests/brain_that_stops_answering_fails_the_call_as_unresponsive.test.ts.
import { assertEquals } from "../../tests/helpers/assert.ts";
import { BrainLiveness, type Clock } from "./liveness.ts";

class TestClock implements Clock {
  t = 0;
  private timers: { at: number; fn: () => void; live: boolean }[] = [];
  now = () => this.t;
  after(ms: number, fn: () => void): () => void {
    const timer = { at: this.t + ms, fn, live: true };
    this.timers.push(timer);
    return () => (timer.live = false);
  }
  /** Moves time to `to`, running each timer due on the way at its own time. */
  advance(to: number): void {
    for (;;) {
      const due = this.timers.filter((x) => x.live && x.at <= to).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      due.live = false;
      this.t = due.at;
      due.fn();
    }
    this.t = to;
  }
  get pending(): number {
    return this.timers.filter((x) => x.live).length;
  }
}

function watch(unresponsiveMs: number, answersPings: boolean) {
  const clock = new TestClock();
  const seen: string[] = [];
  let heardAt = 0;
  const liveness = new BrainLiveness(unresponsiveMs, {
    heardAt: () => heardAt,
    ping: () => {
      seen.push(`${clock.t} ping`);
      // A live brain's pong comes back a few ms later.
      if (answersPings) clock.after(5, () => (heardAt = clock.t));
    },
    silent: (silentMs, leftMs) => seen.push(`${clock.t} silent ${silentMs} left ${leftMs}`),
    back: (silentMs) => seen.push(`${clock.t} back ${silentMs}`),
    unresponsive: (silentMs) => seen.push(`${clock.t} unresponsive ${silentMs}`),
  }, clock);
  return { clock, seen, liveness, hear: (at: number) => (heardAt = at) };
}

Deno.test("a brain that sends nothing is pinged, reported silent, then unresponsive once", () => {
  const { clock, seen, liveness } = watch(15_000, false);
  liveness.start();
  clock.advance(60_000);
  assertEquals(seen, [
    "5000 ping",
    "10000 silent 10000 left 5000",
    "10000 ping",
    "15000 unresponsive 15000",
  ]);
  assertEquals(clock.pending, 0, "nothing is scheduled after the end");
});

Deno.test("a quiet brain that answers pings is kept however long it stays quiet", () => {
  const { clock, seen, liveness } = watch(15_000, true);
  liveness.start();
  clock.advance(10 * 60_000);
  assertEquals(seen.filter((s) => !s.endsWith("ping")), [], seen.slice(0, 5).join(", "));
  // One ping each 5 s of quiet after the last pong.
  assertEquals(seen.length, Math.floor(10 * 60_000 / 5005));
  liveness.stop();
  const pings = seen.length;
  clock.advance(20 * 60_000);
  assertEquals(seen.length, pings, "no ping after stop()");
});

Deno.test("a brain that talks is never pinged", () => {
  const { clock, seen, liveness, hear } = watch(15_000, false);
  liveness.start();
  for (let t = 1000; t <= 60_000; t += 1000) {
    clock.advance(t);
    hear(t);
  }
  assertEquals(seen, []);
  liveness.stop();
});

Deno.test("bytes after the warning are noted and the bound starts again", () => {
  const { clock, seen, liveness, hear } = watch(15_000, false);
  liveness.start();
  clock.advance(12_000);
  hear(12_000); // e.g. a unit that was stuck behind a stalled path
  clock.advance(40_000);
  assertEquals(seen, [
    "5000 ping",
    "10000 silent 10000 left 5000",
    "10000 ping",
    "15000 back 12000",
    "17000 ping",
    "22000 silent 10000 left 5000",
    "22000 ping",
    "27000 unresponsive 15000",
  ]);
});

Deno.test("0 turns liveness off: no ping, no end", () => {
  const { clock, seen, liveness } = watch(0, false);
  liveness.start();
  clock.advance(3600_000);
  assertEquals([seen, clock.pending], [[], 0]);
});
