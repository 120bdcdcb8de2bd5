// The idle stage on a clock of the test's own: no poll, a timer armed when the call falls quiet,
// restarted by activity, stopped while the call is not quiet.
import { assertEquals } from "../../tests/helpers/assert.ts";
import { type IdleClock, IdleStage } from "./idle.ts";

class ManualClock implements IdleClock {
  t = 0;
  #timers = new Map<number, { at: number; fn: () => void }>();
  #next = 1;
  /** Timers fire this much before they are due, as real ones now and then do. */
  early = 0;
  now = () => this.t;
  setTimeout = (fn: () => void, ms: number) => {
    const id = this.#next++;
    // Early by a fraction of a millisecond, never before the next millisecond.
    this.#timers.set(id, { at: this.t + Math.max(Math.min(ms, 1), ms - this.early), fn });
    return id;
  };
  clearTimeout = (id: unknown) => void this.#timers.delete(id as number);
  get pending(): number {
    return this.#timers.size;
  }
  /** Runs the timers due within `ms`, in order, each at its own time. */
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      const due = [...this.#timers].filter(([, t]) =>
        t.at <= end
      ).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.#timers.delete(due[0]);
      this.t = due[1].at;
      due[1].fn();
    }
    this.t = end;
  }
}

function stage(quiet: { now: boolean }) {
  const clock = new ManualClock();
  const fired: { at: number; idleMs: number }[] = [];
  const idle = new IdleStage(
    () => quiet.now,
    (idleMs) => fired.push({ at: clock.t, idleMs }),
    clock,
  );
  return { clock, fired, idle };
}

Deno.test("idle fires once the call has been quiet for the timeout, saying how long", () => {
  const { clock, fired, idle } = stage({ now: true });
  idle.timeoutMs = 1000;
  clock.advance(999);
  assertEquals(fired, []);
  clock.advance(1);
  assertEquals(fired, [{ at: 1000, idleMs: 1000 }]);
});

Deno.test("a timer that fires early does not report idle before the timeout has passed", () => {
  const { clock, fired, idle } = stage({ now: true });
  clock.early = 0.6;
  idle.timeoutMs = 1500;
  clock.advance(1499.5);
  assertEquals(fired, []);
  clock.advance(1.5); // the remainder is timed again (at least 1 ms)
  assertEquals(fired.length, 1);
  assertEquals(fired[0].idleMs >= 1500, true, JSON.stringify(fired));
});

Deno.test("activity restarts the quiet: idle comes the timeout after the last of it", () => {
  const { clock, fired, idle } = stage({ now: true });
  idle.timeoutMs = 1000;
  clock.advance(600);
  idle.activity();
  clock.advance(999);
  assertEquals(fired, []);
  clock.advance(1);
  assertEquals(fired, [{ at: 1600, idleMs: 1000 }]);
});

Deno.test("a call that is not quiet is not timed; its quiet counts from when it began", () => {
  const quiet = { now: false };
  const { clock, fired, idle } = stage(quiet);
  idle.timeoutMs = 1000;
  assertEquals(clock.pending, 0, "no timer while someone speaks or a reply is awaited");
  clock.advance(500);
  quiet.now = true;
  idle.check();
  clock.advance(1000);
  assertEquals(fired, [{ at: 1500, idleMs: 1000 }]);
});

Deno.test("the call ceasing to be quiet stops the timer, and it does not fire late", () => {
  const quiet = { now: true };
  const { clock, fired, idle } = stage(quiet);
  idle.timeoutMs = 1000;
  clock.advance(400);
  quiet.now = false;
  idle.check();
  assertEquals(clock.pending, 0);
  clock.advance(5000);
  assertEquals(fired, []);
});

Deno.test("a new timeout keeps the quiet already timed", () => {
  const { clock, fired, idle } = stage({ now: true });
  idle.timeoutMs = 1000;
  clock.advance(300);
  idle.timeoutMs = 500;
  clock.advance(200);
  assertEquals(fired, [{ at: 500, idleMs: 500 }]);
});

Deno.test("a timeout of 0 never fires, and a stopped stage never again", () => {
  const { clock, fired, idle } = stage({ now: true });
  idle.timeoutMs = 0;
  clock.advance(10_000);
  assertEquals(fired, []);
  idle.timeoutMs = 1000;
  idle.stop();
  idle.activity();
  clock.advance(10_000);
  assertEquals(fired, []);
});
