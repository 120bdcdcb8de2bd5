import { assertEquals } from "../tests/helpers/assert.ts";
import { TokenBucket } from "./token_bucket.ts";

Deno.test("a token bucket gives its burst at once, then its rate", () => {
  let now = 0;
  const bucket = new TokenBucket(20, 5, () => now);
  const taken = () => Array.from({ length: 10 }, () => bucket.take()).filter(Boolean).length;
  assertEquals(taken(), 5);
  now = 100; // 100 ms at 20 a second: 2 more
  assertEquals(taken(), 2);
  now = 10_000; // refilled to the burst, never beyond
  assertEquals(taken(), 5);
});

Deno.test("a token bucket with no rate takes no limit", () => {
  const bucket = new TokenBucket(0, 0);
  assertEquals(Array.from({ length: 100 }, () => bucket.take()).every(Boolean), true);
});
