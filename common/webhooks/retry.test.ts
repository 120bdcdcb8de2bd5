import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { backoffCeilingMs, DEFAULT_RETRY, nextAttemptAt } from "./retry.ts";

Deno.test("the ceiling doubles from 5 s and stops at 30 minutes", () => {
  assertEquals(
    [1, 2, 3, 4, 5, 9, 10, 11, 50].map((n) => backoffCeilingMs(n)),
    [5_000, 10_000, 20_000, 40_000, 80_000, 1_280_000, 1_800_000, 1_800_000, 1_800_000],
  );
});

Deno.test("full jitter: the wait spans 0 up to the ceiling", () => {
  assertEquals(nextAttemptAt(3, 0, 1000, DEFAULT_RETRY, () => 0), 1000);
  assertEquals(nextAttemptAt(3, 0, 1000, DEFAULT_RETRY, () => 0.999999), 1000 + 19_999);
  for (let i = 0; i < 200; i++) {
    const at = nextAttemptAt(4, 0, 0)!;
    assert(at >= 0 && at < 40_000, `${at}`);
  }
});

Deno.test("retries go on for 24 hours, then the delivery is given up", () => {
  const day = 24 * 3600_000;
  assert(nextAttemptAt(200, 0, day - 1) !== undefined);
  assertEquals(nextAttemptAt(200, 0, day), undefined);
  // Simulated with the mean wait: at least as many attempts as a day of 30-minute gaps.
  let now = 0, attempts = 0;
  while (true) {
    attempts++;
    const next = nextAttemptAt(attempts, 0, now, DEFAULT_RETRY, () => 0.5);
    if (next === undefined) break;
    now = next;
  }
  assert(now >= day && attempts > 48, `${attempts} attempts over ${now} ms`);
});
