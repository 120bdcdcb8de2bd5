// config.outbound_greeting (issue 34) as the API reads a connect's or a dial's config: a known
// start and a wait of at most 10 s, refused with the field named otherwise.
import { assertEquals, assertThrows } from "./helpers/assert.ts";
import { checkConfig, type ConfigLeaf, readConfigLeaves } from "../api/connect/config.ts";
import { ApiError } from "../common/http/errors.ts";
// The Context variables errors.ts reads are declared there.
import type {} from "../common/http/correlation.ts";
import type { Capabilities } from "../common/capabilities.ts";

const NO_NODES = { nodes: [] } as unknown as Capabilities;

function read(config: unknown) {
  const leaves: ConfigLeaf[] = [];
  readConfigLeaves(config, "config", leaves);
  return checkConfig(new Map(leaves.map((l) => [l.key, l])), NO_NODES);
}

Deno.test("outbound_greeting is taken with a known start and a bounded wait", () => {
  assertEquals(read({ outbound_greeting: { start: "AFTER_DELAY", wait_ms: 1500 } }), {
    outbound_greeting: { start: "AFTER_DELAY", wait_ms: 1500 },
  });
  assertEquals(read({ outbound_greeting: { start: "CALLEE_FIRST" } }), {
    outbound_greeting: { start: "CALLEE_FIRST" },
  });
});

Deno.test("outbound_greeting with an unknown start or a wait over 10 s is refused, naming the field", () => {
  for (
    const [config, field] of [
      [{ outbound_greeting: { start: "WHENEVER" } }, "config.outbound_greeting.start"],
      [{ outbound_greeting: { wait_ms: 10_001 } }, "config.outbound_greeting.wait_ms"],
      [{ outbound_greeting: { wait_ms: -1 } }, "config.outbound_greeting.wait_ms"],
      [{ outbound_greeting: { after: "x" } }, "config.outbound_greeting.after"],
    ] as const
  ) {
    const err = assertThrows(() => read(config), ApiError) as ApiError;
    assertEquals(err.details.field, field, err.message);
  }
});
