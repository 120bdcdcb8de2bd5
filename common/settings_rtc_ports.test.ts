// RTC_PORTS is read as a range of at least two ports, and anything else stops the process with
// a message naming the variable (a worker must not silently take any port when told a range).
import { assertEquals, assertMatch, assertThrows } from "../tests/helpers/assert.ts";
import { loadSettings } from "./settings.ts";

Deno.test("RTC_PORTS: a range is taken, unset is any port, a bad one is refused by name", () => {
  assertEquals(loadSettings({ RTC_PORTS: "50000-50199" }).rtcPorts, { first: 50000, last: 50199 });
  assertEquals(loadSettings({}).rtcPorts, undefined);
  for (const bad of ["50000", "50000-49999", "80-90", "50000-50000", "a-b"]) {
    assertMatch(assertThrows(() => loadSettings({ RTC_PORTS: bad }), Error).message, /^RTC_PORTS/);
  }
});
