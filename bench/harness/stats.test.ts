import { assertEquals } from "../../tests/helpers/assert.ts";
import { mean, median, percentile, slope, sum } from "./stats.ts";

Deno.test("percentiles are nearest rank: p99 of fewer than 100 samples is the max", () => {
  const xs = Array.from({ length: 50 }, (_, i) => 50 - i);
  assertEquals(percentile(xs, 99), 50);
  assertEquals(percentile(xs, 50), 25);
  assertEquals(percentile(Array.from({ length: 100 }, (_, i) => i + 1), 99), 99);
  assertEquals(percentile([7], 0), 7);
  assertEquals(percentile([], 50), NaN);
});

Deno.test("the median of an even count is its lower middle, of an odd one its middle", () => {
  assertEquals(median([4, 1, 3, 2]), 2);
  assertEquals(median([5, 1, 3]), 3);
});

Deno.test("sum, mean and slope", () => {
  assertEquals(sum([1, 2, 3]), 6);
  assertEquals(mean([1, 2, 3]), 2);
  assertEquals(mean([]), NaN);
  assertEquals(slope([0, 1, 2], [1, 3, 5]), 2);
  assertEquals(slope([1], [1]), NaN);
});
