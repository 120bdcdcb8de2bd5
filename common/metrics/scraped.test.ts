import { Registry } from "prom-client";
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { registerScrapedHistogram } from "./scraped.ts";
import { described, sample } from "./testing.ts";

Deno.test("a scraped histogram exposes what read() gives at each scrape, as a histogram", async () => {
  const registry = new Registry();
  let seen = 0;
  registerScrapedHistogram(registry, {
    name: "voice_test_seconds",
    help: "A test.",
    read: () => ({
      buckets: [{ le: 0.001, count: seen }, { le: 0.01, count: seen * 2 }],
      count: seen * 3,
      sum: seen * 0.5,
    }),
  });
  seen = 2;
  let text = await registry.metrics();
  assert(described(text, "voice_test_seconds", "histogram"), text);
  assertEquals(sample(text, "voice_test_seconds_bucket", { le: "0.001" }), 2);
  assertEquals(sample(text, "voice_test_seconds_bucket", { le: "0.01" }), 4);
  assertEquals(sample(text, "voice_test_seconds_bucket", { le: "+Inf" }), 6);
  assertEquals(sample(text, "voice_test_seconds_sum"), 1);
  assertEquals(sample(text, "voice_test_seconds_count"), 6);
  seen = 5;
  text = await registry.metrics();
  assertEquals(sample(text, "voice_test_seconds_count"), 15);
});
