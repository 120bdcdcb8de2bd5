// The token bucket: burst, refill, the wait it reports, and memory bounded however many keys
// (client addresses) come by.
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { RateLimiter } from "./rate_limit.ts";

Deno.test("a bucket allows its burst, then refills at its rate", () => {
  const l = new RateLimiter(2, 3);
  assertEquals([l.take("a", 0), l.take("a", 0), l.take("a", 0)], [0, 0, 0]);
  assertEquals(l.take("a", 0), 1, "wait a second (half a second, rounded up)");
  assertEquals(l.take("b", 0), 0, "another key has its own bucket");
  assertEquals(l.take("a", 500), 0, "one token back after 500 ms");
  assertEquals(l.take("a", 500), 1);
  assertEquals(new RateLimiter(0, 0).take("a", 0), 0, "0 per second: no limit");
  assertEquals(new RateLimiter(0.1, 1).take("a", 0), 0);
});

Deno.test("idle buckets are dropped once they would be full again", () => {
  const l = new RateLimiter(1, 5);
  for (let i = 0; i < 1000; i++) l.take(`10.0.${i >> 8}.${i & 255}`, i);
  assert(l.size <= 1000);
  // 5 s later (the burst refilled) only the recent ones are left.
  l.take("x", 5_600);
  assert(l.size < 700, `${l.size} buckets`);
  l.take("y", 20_000);
  assertEquals(l.size, 1, "x went idle too; only y is left");
});

Deno.test("however many keys come by, at most maxBuckets are kept", () => {
  const l = new RateLimiter(1, 5, 100);
  for (let i = 0; i < 10_000; i++) l.take(`k${i}`, 0);
  assertEquals(l.size, 100);
  // The most recent survive: their burst is spent.
  for (let i = 0; i < 5; i++) l.take("k9999", 0);
  assert(l.take("k9999", 0) > 0);
});

Deno.test("waiting reports what take would answer without taking a token", () => {
  const l = new RateLimiter(1, 2);
  assertEquals(l.waiting("a", 0), 0, "an unseen key has its whole burst");
  assertEquals([l.take("a", 0), l.take("a", 0)], [0, 0]);
  assertEquals(l.waiting("a", 0), 1);
  assertEquals(l.waiting("a", 0), 1, "waiting took nothing");
  assertEquals(l.waiting("a", 1000), 0);
  assertEquals(l.take("a", 1000), 0);
});
