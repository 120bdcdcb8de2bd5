// The breaker's transitions, event by event, with the time passed in.
import { assertEquals } from "../../tests/helpers/assert.ts";
import {
  breakerDueIn,
  type BreakerEvent,
  type BreakerSettings,
  type BreakerState,
  breakerUp,
  CLOSED,
  nextBreakerState,
  UNKNOWN,
} from "./breaker.ts";

const settings: BreakerSettings = { coolDownMs: 1000, connectionFailures: 3 };
const refused: BreakerEvent = { type: "failed", fault: "auth", reason: "HTTP 403" };
const unreachable: BreakerEvent = { type: "failed", fault: "connection", reason: "refused" };
const worked: BreakerEvent = { type: "succeeded" };
const time: BreakerEvent = { type: "time" };

/** The states after each event, `[event, at]` in order, from `from`. */
function run(from: BreakerState, events: [BreakerEvent, number][]): BreakerState[] {
  const out: BreakerState[] = [];
  let s = from;
  for (const [e, at] of events) out.push(s = nextBreakerState(s, e, at, settings));
  return out;
}

Deno.test("a refused credential opens the breaker at once", () => {
  const [s] = run(CLOSED, [[refused, 50]]);
  assertEquals(s, { status: "open", failures: 0, openedAt: 50, reason: "HTTP 403" });
  assertEquals(breakerUp(s), false);
});

Deno.test("connection failures open it only when they come N in a row", () => {
  const states = run(CLOSED, [[unreachable, 0], [unreachable, 1], [worked, 2], [unreachable, 3]]);
  assertEquals(states.map((s) => [s.status, s.failures]), [
    ["closed", 1],
    ["closed", 2],
    ["closed", 0], // a use that worked starts the count again
    ["closed", 1],
  ]);
  const [, , third] = run(CLOSED, [[unreachable, 0], [unreachable, 1], [unreachable, 7]]);
  assertEquals([third.status, third.openedAt, breakerUp(third)], ["open", 7, false]);
});

Deno.test("a failure that is not about reaching the engine leaves a closed breaker alone", () => {
  const [s] = run(CLOSED, [[{ type: "failed", reason: "error frame" }, 0]]);
  assertEquals(s, CLOSED);
});

Deno.test("the probe is due a cool-down after opening, and not before", () => {
  const [opened, early, due] = run(CLOSED, [[refused, 100], [time, 1099], [time, 1100]]);
  assertEquals(breakerDueIn(opened, 100, settings), 1000);
  assertEquals(breakerDueIn(opened, 600, settings), 500);
  assertEquals(early.status, "open");
  assertEquals(due.status, "half-open");
  assertEquals(breakerUp(due), false); // half-open is the probe's, not the calls'
  assertEquals(breakerDueIn(due, 1100, settings), undefined);
  assertEquals(breakerDueIn(CLOSED, 0, settings), undefined);
});

Deno.test("a probe that works closes it; one that fails waits another cool-down", () => {
  const [, half, again, stillOpen, half2, closed] = run(CLOSED, [
    [refused, 0],
    [time, 1000],
    [{ type: "failed", reason: "no answer" }, 1200], // any probe failure, fault or not
    [time, 2100],
    [time, 2200],
    [worked, 2300],
  ]);
  assertEquals(half.status, "half-open");
  assertEquals([again.status, again.openedAt, again.reason], ["open", 1200, "no answer"]);
  assertEquals(stillOpen.status, "open");
  assertEquals(half2.status, "half-open");
  assertEquals(closed, CLOSED);
  assertEquals(breakerUp(closed), true);
});

Deno.test("late failures of uses begun before it opened do not restart the cool-down", () => {
  const [, late] = run(CLOSED, [[refused, 0], [refused, 900]]);
  assertEquals([late.status, late.openedAt], ["open", 0]);
});

Deno.test("an engine not probed yet is out of routing until its first probe answers", () => {
  assertEquals(breakerUp(UNKNOWN), false);
  assertEquals(nextBreakerState(UNKNOWN, worked, 5, settings), CLOSED);
  const failed = nextBreakerState(UNKNOWN, unreachable, 5, settings);
  assertEquals([failed.status, failed.openedAt], ["open", 5]); // one failed probe is enough
});
