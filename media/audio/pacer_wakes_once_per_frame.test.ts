import assert from "node:assert/strict";
import { Pacer } from "./pacer.ts";

// Every timer wake is a macrotask on the media thread, once per call per 20 ms. A pacer that woke
// early and re-armed for the exact deadline cost a second wake on almost half its frames.
Deno.test("the pacer wakes its timer about once per frame, not again for a fraction of a ms", async () => {
  const realSetTimeout = globalThis.setTimeout;
  let wakes = 0;
  const counting = ((fn: () => void, ms?: number) =>
    realSetTimeout(() => {
      wakes++;
      fn();
    }, ms)) as typeof setTimeout;
  let ticks = 0;
  const pacer = new Pacer(() => void ticks++);
  globalThis.setTimeout = counting;
  try {
    pacer.start();
    await new Promise((r) => realSetTimeout(r, 1500));
  } finally {
    pacer.stop();
    globalThis.setTimeout = realSetTimeout;
  }
  assert.ok(ticks >= 50, `ticks ${ticks}`);
  // A stalled loop may add a catch-up wake now and then; an early-wake habit adds ~45 %.
  assert.ok(wakes <= ticks * 1.1 + 2, `${wakes} timer wakes for ${ticks} ticks`);
});
