import { assertEquals, assertThrows } from "../tests/helpers/assert.ts";
import { evenPortsFrom, parsePortRange } from "./port_range.ts";

Deno.test("a port range parses from first-last and refuses what is not one, saying why", () => {
  assertEquals(parsePortRange("40000-40999"), { first: 40000, last: 40999 });
  assertEquals(parsePortRange(" 5000 - 5001 "), { first: 5000, last: 5001 });
  for (
    const [text, why] of [
      ["40000", "must be a port range"],
      ["a-b", "must be a port range"],
      ["80-90", "80 is not a port from 1024"],
      ["40000-70000", "70000 is not a port"],
      ["41000-40000", "41000 comes after 40000"],
    ]
  ) {
    const err = assertThrows(() => parsePortRange(text), Error);
    assertEquals(err.message.includes(why), true, err.message);
  }
});

Deno.test("the range's even ports are each offered once, from a random start, wrapping", () => {
  const range = { first: 40001, last: 40010 }; // even: 40002 .. 40010
  assertEquals([...evenPortsFrom(range, () => 0)], [40002, 40004, 40006, 40008, 40010]);
  assertEquals([...evenPortsFrom(range, () => 0.5)], [40006, 40008, 40010, 40002, 40004]);
  assertEquals([...evenPortsFrom({ first: 40001, last: 40001 })], []);
});
