import { assertEquals } from "../tests/helpers/assert.ts";
import type { Fields, Logger } from "./log.ts";
import { RefusalLog } from "./refusal_log.ts";

function capture() {
  const lines: [string, Fields][] = [];
  const push = (m: string, f: Fields = {}) => void lines.push([m, f]);
  const log: Logger = { info: push, warn: push, error: push };
  return { log, lines };
}

Deno.test("a refusal repeated within a second is counted into the next line, not written", () => {
  const { log, lines } = capture();
  let now = 0;
  const refusals = new RefusalLog(log, { now: () => now });
  for (let i = 0; i < 50; i++) refusals.refused("refused", "192.0.2.1:5060", "bad digest");
  assertEquals(lines.length, 1);
  now = 1000;
  refusals.refused("refused", "192.0.2.1:5060", "bad digest");
  assertEquals(lines.length, 2);
  assertEquals(lines[1][1].suppressed, 49);
  // Another reason from the same source is a line of its own.
  refusals.refused("refused", "192.0.2.1:5060", "no such number");
  assertEquals(lines.length, 3);
});

Deno.test("many sources at once write at most perWindow lines a window", () => {
  const { log, lines } = capture();
  let now = 0;
  const refusals = new RefusalLog(log, { perWindow: 5, maxKeys: 100, now: () => now });
  for (let i = 0; i < 1000; i++) refusals.refused("refused", `198.51.100.${i % 250}`, "x");
  assertEquals(lines.length, 5);
  now = 1000;
  refusals.refused("refused", "203.0.113.9", "x");
  // 995 held back: 15 are repeats of the five sources written (each counted on its own next
  // line), the other 980 are counted on the next line written.
  assertEquals(lines[5][1].suppressed, 980);
});
