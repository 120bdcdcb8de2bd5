// The breakers' driver: the start-up probe, failures reported by the routers, the probe after each
// cool-down (on a clock the test moves), and the changes the node re-advertises on.
import { assertEquals } from "../../tests/helpers/assert.ts";
import { eventually } from "../../tests/helpers/call_harness.ts";
import { setQuiet } from "../../common/log.ts";
import { SynthesisError } from "../tts/engine.ts";
import { EngineHealth } from "./engine_health.ts";

setQuiet(true);

/** A provider's probe whose answer the test sets, counting the times it is asked. */
function provider(name: string, answer: () => Promise<void>) {
  const p = {
    name,
    leg: "synthesis" as const,
    asked: 0,
    answer,
    probe: () => {
      p.asked++;
      return p.answer();
    },
  };
  return p;
}
const refuse = () => Promise.reject(new SynthesisError("HTTP 403", { fault: "auth" as const }));
const accept = () => Promise.resolve();

Deno.test("the start-up probe takes a provider whose key is refused out; local engines stay up", async () => {
  const refused = provider("bulbul", refuse), fine = provider("parler", accept);
  const health = new EngineHealth([refused, fine, { name: "espeak-ng", leg: "synthesis" }]);
  assertEquals([health.up("bulbul"), health.up("parler")], [false, false]); // not probed yet
  await health.start();
  assertEquals([health.up("bulbul"), health.up("parler"), health.up("espeak-ng")], [
    false,
    true,
    true,
  ]);
  assertEquals(health.breakers().map((b) => [b.engine, b.status]), [
    ["bulbul", "open"],
    ["parler", "closed"],
  ]);
  health.close();
});

Deno.test("a down engine is probed once per cool-down and comes back when the probe is accepted", async () => {
  let now = 0;
  const bulbul = provider("bulbul", refuse);
  const health = new EngineHealth([bulbul], { coolDownMs: 20, connectionFailures: 3 }, () => now);
  let changes = 0;
  health.onChange(() => changes++);
  await health.start();
  assertEquals([health.up("bulbul"), bulbul.asked, changes], [false, 1, 0]);
  // Real timers fire, but on the breaker's clock no cool-down has passed: no probe.
  await new Promise((r) => setTimeout(r, 80));
  assertEquals(bulbul.asked, 1);
  now = 20; // the cool-down is over: one probe, refused, and another cool-down
  await eventually(() => bulbul.asked === 2, "the second probe");
  await new Promise((r) => setTimeout(r, 60));
  assertEquals(bulbul.asked, 2);
  bulbul.answer = accept;
  now = 40;
  await eventually(() => health.up("bulbul"), "bulbul up again");
  assertEquals([bulbul.asked, changes], [3, 1]); // one change: up (the start was not a change)
  const [b] = health.breakers();
  assertEquals(b.transitions, { open: 2, "half-open": 2, closed: 1 });
  health.close();
});

Deno.test("uses that fail: a refused key opens at once, connection failures three in a row", async () => {
  const a = provider("saaras", accept), b = provider("bulbul", accept);
  const health = new EngineHealth([a, b]);
  await health.start();
  let changes = 0;
  health.onChange(() => changes++);
  health.failed("saaras", new SynthesisError("HTTP 401", { fault: "auth" }));
  assertEquals([health.up("saaras"), changes], [false, 1]);
  const unreachable = new SynthesisError("tcp connect error", { fault: "connection" });
  health.failed("bulbul", unreachable);
  health.failed("bulbul", new SynthesisError("error frame")); // not about reaching it
  health.failed("bulbul", unreachable);
  assertEquals(health.up("bulbul"), true);
  health.failed("bulbul", unreachable);
  assertEquals([health.up("bulbul"), changes], [false, 2]);
  health.close();
});
