// The brain's frames read into what the call does with them.
import { assertEquals } from "../../tests/helpers/assert.ts";
import type { BrainFrame } from "./connection.ts";
import { heardBody, readBrainFrame } from "./frames.ts";

const frame = (kind: BrainFrame["kind"], body: Record<string, unknown>): BrainFrame => ({
  seq: 1,
  timestamp_ms: 0,
  kind,
  body,
});

Deno.test("a greeting is the last unit of turn greeting; a speech unit keeps its ids", () => {
  assertEquals(readBrainFrame(frame("greeting", { text: "Hi" })), {
    kind: "unit",
    turnId: "greeting",
    unitId: "greeting",
    text: "Hi",
    last: true,
  });
  assertEquals(
    readBrainFrame(frame("speech_unit", { turn_id: "t2", unit_id: "u1", last: false })),
    { kind: "unit", turnId: "t2", unitId: "u1", text: "", last: false },
  );
});

Deno.test("an action's JSON is parsed for the page; text that is not JSON goes as the text it is", () => {
  assertEquals(readBrainFrame(frame("action", { type: "show", json: '{"a":[1]}' })), {
    kind: "action",
    type: "show",
    data: { a: [1] },
  });
  assertEquals(readBrainFrame(frame("action", { type: "say", json: "not {json" })), {
    kind: "action",
    type: "say",
    data: "not {json",
  });
  assertEquals(readBrainFrame(frame("action", { type: "ping", json: "" })), {
    kind: "action",
    type: "ping",
    data: null,
  });
});

Deno.test("end_session without a reason ends as brain_ended; Heard bodies use the wire's names", () => {
  assertEquals(readBrainFrame(frame("end_session", {})), {
    kind: "end_session",
    reason: "brain_ended",
  });
  assertEquals(
    heardBody({ unitId: "u1", turnId: "t1", heard: "Hello", cutOff: true }),
    { unit_id: "u1", turn_id: "t1", text: "Hello", cut_off: true },
  );
});

Deno.test("a transfer names its target, trimmed; an empty one stays empty for the call to refuse", () => {
  assertEquals(readBrainFrame(frame("transfer", { target: " tel:+14155550100 " })), {
    kind: "transfer",
    target: "tel:+14155550100",
    whisper: "",
    ringTimeoutMs: 0,
  });
  assertEquals(readBrainFrame(frame("transfer", {})), {
    kind: "transfer",
    target: "",
    whisper: "",
    ringTimeoutMs: 0,
  });
});

Deno.test("a warm transfer carries its whisper and ring timeout", () => {
  assertEquals(
    readBrainFrame(
      frame("transfer", {
        target: "sip:desk@pbx",
        whisper: " Asha, billing. ",
        ring_timeout_ms: 8000,
      }),
    ),
    { kind: "transfer", target: "sip:desk@pbx", whisper: "Asha, billing.", ringTimeoutMs: 8000 },
  );
});
