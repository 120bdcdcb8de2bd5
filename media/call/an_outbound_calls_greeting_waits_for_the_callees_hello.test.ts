// The greeting gate of a call the service placed (greeting_gate.ts): held until the callee's first
// words end, or at most wait_ms; AFTER_DELAY waits its delay whatever the callee says; the
// callee's answering words are never listened to as a turn.
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { GreetingGate, outboundGreetingOf } from "./greeting_gate.ts";

const frame = (amplitude: number) =>
  new Int16Array(320).map((_, i) => i % 2 ? amplitude : -amplitude);
const LOUD = frame(3000), QUIET = frame(20);

function gate(rule: Parameters<typeof outboundGreetingOf>[0]) {
  // What the gate logs when it opens, and the units it then hands on, per opening.
  const released: { units: number; why: string; waited: number }[] = [];
  const log = {
    add: (_source: string, _kind: string, data: { why: string; waited_ms: number }) =>
      void released.push({ units: 0, why: data.why, waited: data.waited_ms }),
  };
  const g = new GreetingGate(outboundGreetingOf(rule), log as never, {
    unit: () => void released.at(-1)!.units++,
  });
  return { g, released };
}

Deno.test("callee first: the greeting waits for the callee's hello to end, which is not heard as a turn", () => {
  const { g, released } = gate(undefined);
  assert(g.hold("greeting", "u1", "Hello, this is the hotel.", true));
  assert(!g.hold("t1", "u2", "Not a greeting.", true), "a turn's unit was held");
  const listened: boolean[] = [];
  for (let i = 0; i < 10; i++) listened.push(g.hear(QUIET)); // the line just answered
  for (let i = 0; i < 20; i++) listened.push(g.hear(LOUD)); // "Hello?" (400 ms)
  assertEquals(released, []);
  for (let i = 0; i < 24; i++) listened.push(g.hear(QUIET)); // 480 ms: not yet the end
  assertEquals(released, []);
  listened.push(g.hear(QUIET)); // 500 ms of quiet after the words: released
  assertEquals(released.map((r) => [r.units, r.why]), [[1, "callee_spoke"]]);
  assert(listened.every((l) => !l), "the callee's hello reached the listener");
  assert(g.hear(LOUD), "after the greeting is released the callee is listened to");
  assert(!g.holding);
  assert(!g.hold("greeting", "u3", "Late.", true), "a unit was held after the gate opened");
  g.stop();
});

Deno.test("callee first: a silent callee gets the greeting after wait_ms", async () => {
  const { g, released } = gate({ outbound_greeting: { start: "CALLEE_FIRST", wait_ms: 200 } });
  g.hold("greeting", "u1", "Hello?", true);
  for (let i = 0; i < 3; i++) g.hear(LOUD); // a click, too short to be words
  await new Promise((r) => setTimeout(r, 300));
  assertEquals(released.map((r) => [r.units, r.why]), [[1, "callee_silent"]]);
  assert(released[0].waited >= 190, `released after ${released[0].waited} ms`);
});

Deno.test("after delay: the callee's words do not release it early", async () => {
  const { g, released } = gate({ outbound_greeting: { start: "AFTER_DELAY", wait_ms: 250 } });
  for (let i = 0; i < 20; i++) g.hear(LOUD);
  for (let i = 0; i < 40; i++) g.hear(QUIET);
  assertEquals(released, []);
  await new Promise((r) => setTimeout(r, 350));
  assertEquals(released.map((r) => r.why), ["delay"]);
});

Deno.test("the rule defaults to callee first for 3 s and caps the wait at 10 s", () => {
  assertEquals(outboundGreetingOf(undefined), { start: "callee_first", waitMs: 3000 });
  assertEquals(
    outboundGreetingOf({ outbound_greeting: { start: "AFTER_DELAY", wait_ms: 60_000 } }),
    {
      start: "after_delay",
      waitMs: 10_000,
    },
  );
  const stopped = gate(undefined);
  stopped.g.stop(); // the call ended while the greeting was held: no timer is left behind
  assertEquals(stopped.released, []);
});

Deno.test("on detection: neither the callee's words nor any wait release it, only the detector's outcome", async () => {
  const released: { why: string }[] = [];
  const units: string[] = [];
  let opens!: (why: string) => void;
  const g = new GreetingGate(
    { start: "on_detection", opens: new Promise((r) => (opens = r)) },
    { add: (_s: string, _k: string, data: { why: string }) => void released.push(data) } as never,
    { unit: (_t, unitId) => void units.push(unitId) },
  );
  assert(g.hold("greeting", "u1", "Hello, this is the clinic.", true));
  const listened: boolean[] = [];
  for (let i = 0; i < 20; i++) listened.push(g.hear(LOUD)); // a machine's greeting...
  for (let i = 0; i < 40; i++) listened.push(g.hear(QUIET)); // ...and its pause
  await new Promise((r) => setTimeout(r, 3100)); // past CALLEE_FIRST's own wait
  assertEquals([released, units], [[], []]);
  assert(listened.every((l) => !l), "the callee was listened to while the greeting was held");
  opens("beep");
  await new Promise((r) => setTimeout(r, 0));
  assertEquals([released.map((r) => r.why), units], [["beep"], ["u1"]]);
  assert(g.hear(QUIET), "the callee is not listened to after the release");
});
