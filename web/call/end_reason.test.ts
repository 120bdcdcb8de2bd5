import assert from "node:assert/strict";
import { describeEnd } from "./end_reason.ts";

Deno.test("the page says why the call ended, in words with the service's code", () => {
  assert.equal(
    describeEnd({ status: "ended", reason: "brain_ended" }),
    "Call ended: the brain ended the call (brain_ended).",
  );
  assert.equal(
    describeEnd({ status: "failed", reason: "brain_unreachable" }),
    "Call failed: the brain could not be reached (brain_unreachable).",
  );
  assert.equal(describeEnd({ status: "ended", reason: "new_reason" }), "Call ended (new_reason).");
  assert.match(describeEnd({ status: "disconnected", reason: "" }), /before the service said why/);
  assert.equal(describeEnd(undefined), "");
});
