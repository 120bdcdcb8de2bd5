// calls.dial's body: the dial fields with their bounds and defaults, the agent's input read as
// connect reads it, and the service's own metadata kept the service's.
import { assertEquals, assertThrows } from "../../tests/helpers/assert.ts";
import { LOCAL_ENGINES } from "../../common/capabilities.ts";
import { ApiError } from "../../common/http/errors.ts";
import { parseDialBody } from "./parse.ts";
// errors.ts reads the Context variables correlation.ts declares; the suite loads it, a lone run not.
import type {} from "../../common/http/correlation.ts";

const base = { agent_id: "agt_1", to: "+442071838750", from: "+14155550100" };

function refusedField(body: Record<string, unknown>): unknown {
  const err = assertThrows(() => parseDialBody(body, LOCAL_ENGINES), ApiError);
  return [err.status, err.code, err.details.field];
}

Deno.test("a dial body gets its defaults and the phone numbers in its metadata", () => {
  const req = parseDialBody(
    { ...base, metadata: { order: "A-17" }, init: { n: 1 } },
    LOCAL_ENGINES,
  );
  assertEquals([req.ring_timeout_seconds, req.machine_detection, req.trunk_id], [
    30,
    "off",
    undefined,
  ]);
  assertEquals(req.input.metadata, {
    order: "A-17",
    phone_from: "+14155550100",
    phone_to: "+442071838750",
  });
  assertEquals(req.input.init, { n: 1 });
  assertEquals(parseDialBody({ ...base, carrier: "plivo" }, LOCAL_ENGINES).carrier, "plivo");
  const full = parseDialBody(
    { ...base, trunk_id: "trk_1", ring_timeout_seconds: 120, machine_detection: "leave_message" },
    LOCAL_ENGINES,
  );
  assertEquals([full.trunk_id, full.ring_timeout_seconds, full.machine_detection], [
    "trk_1",
    120,
    "leave_message",
  ]);
});

Deno.test("each refusal names its field", () => {
  const cases: [Record<string, unknown>, unknown][] = [
    [{ ...base, to: undefined }, [400, "invalid_request", "to"]],
    [{ ...base, to: "+1234567" }, [400, "invalid_request", "to"]],
    [{ ...base, to: "+0442071838750" }, [400, "invalid_request", "to"]],
    [{ ...base, from: "14155550100" }, [400, "invalid_request", "from"]],
    [{ ...base, from: 14155550100 }, [400, "invalid_request", "from"]],
    [{ ...base, trunk_id: 7 }, [400, "invalid_request", "trunk_id"]],
    [{ ...base, ring_timeout_seconds: 4 }, [400, "invalid_request", "ring_timeout_seconds"]],
    [{ ...base, ring_timeout_seconds: 121 }, [400, "invalid_request", "ring_timeout_seconds"]],
    [{ ...base, ring_timeout_seconds: 30.5 }, [400, "invalid_request", "ring_timeout_seconds"]],
    [{ ...base, machine_detection: "on" }, [400, "invalid_request", "machine_detection"]],
    [{ ...base, metadata: { phone_from: "x" } }, [400, "invalid_request", "metadata.phone_from"]],
    [
      { ...base, metadata: Object.fromEntries([...Array(9)].map((_, i) => [`k${i}`, "v"])) },
      [400, "invalid_metadata", "metadata"],
    ],
    [{ ...base, agent_id: undefined }, [400, "invalid_request", "agent_id"]],
    [{ ...base, shoe: 1 }, [400, "invalid_request", "shoe"]],
    [{ ...base, carrier: "vonage" }, [400, "invalid_request", "carrier"]],
    [{ ...base, carrier: "twilio", trunk_id: "trk_1" }, [400, "invalid_request", "carrier"]],
    [{ ...base, metadata: { phone_carrier: "x" } }, [
      400,
      "invalid_request",
      "metadata.phone_carrier",
    ]],
  ];
  for (const [body, expected] of cases) {
    assertEquals(refusedField(body), expected, JSON.stringify(body));
  }
});
