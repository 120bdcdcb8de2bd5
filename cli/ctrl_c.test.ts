import { assertEquals } from "../tests/helpers/assert.ts";
import { SAME_PRESS_MS, StopSignals } from "./ctrl_c.ts";

Deno.test("a Ctrl-C delivered twice at once is one press; one pressed again later stops now", () => {
  const signals = new StopSignals();
  assertEquals(signals.read(1000), "stop");
  // The same press through deno task's forwarding, in the same millisecond and a little later.
  assertEquals(signals.read(1000), "same press");
  assertEquals(signals.read(1000 + SAME_PRESS_MS - 1), "same press");
  // The user has waited and presses again.
  assertEquals(signals.read(1000 + SAME_PRESS_MS), "stop now");
  assertEquals(signals.read(5000), "stop now");
});
