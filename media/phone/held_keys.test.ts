import { assertEquals } from "../../tests/helpers/assert.ts";
import { HeldKeys } from "./held_keys.ts";

Deno.test("keys emitted before anyone listens go to the first listener, in order, a few at most", () => {
  const keys = new HeldKeys(3);
  for (const digit of ["1", "2", "3", "4"]) keys.emit({ digit, durationMs: 100 });
  const heard: string[] = [];
  keys.on((d) => heard.push(d.digit));
  assertEquals(heard, ["1", "2", "3"]);
  keys.emit({ digit: "#", durationMs: 100 });
  assertEquals(heard, ["1", "2", "3", "#"]);
  // A later listener hears what comes from now on, not the held keys again.
  const late: string[] = [];
  keys.on((d) => late.push(d.digit));
  keys.emit({ digit: "5", durationMs: 100 });
  assertEquals([heard.at(-1), late], ["5", ["5"]]);
});
