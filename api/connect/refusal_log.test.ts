// The refusal log's budget: so many lines a window, the rest counted and reported on the first
// line of a later window.
import { assertEquals } from "../../tests/helpers/assert.ts";
import { LogWindow } from "./refusal_log.ts";

Deno.test("a log window writes its budget, counts the rest, and reports them on the next line", () => {
  const w = new LogWindow(3, 1000);
  assertEquals([w.take(0), w.take(10), w.take(20)], [0, 0, 0]);
  assertEquals([w.take(30), w.take(40)], [undefined, undefined]);
  assertEquals(w.take(999), undefined, "still the same window");
  assertEquals(w.take(1000), 3, "a new window: the three left out are reported");
  assertEquals(w.take(1001), 0);
});
