// A local engine replaces at most MAX_RESTARTS crashed threads in any minute, then again once the
// oldest restart is a minute old.
import { assertEquals } from "../../tests/helpers/assert.ts";
import { MAX_RESTARTS, RestartBudget } from "./restart_budget.ts";

Deno.test("crashed threads are replaced at most MAX_RESTARTS times in any minute", () => {
  let now = 0;
  const budget = new RestartBudget(MAX_RESTARTS, () => now);
  const taken = Array.from({ length: MAX_RESTARTS + 2 }, () => budget.take());
  assertEquals(taken, [...Array(MAX_RESTARTS).fill(true), false, false]);
  assertEquals(budget.restarted, MAX_RESTARTS);
  now = 59_999;
  assertEquals(budget.take(), false);
  now = 60_000; // the first restarts are a minute old
  assertEquals(budget.take(), true);
  assertEquals(budget.restarted, MAX_RESTARTS + 1);
});
