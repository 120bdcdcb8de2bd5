import { assertEquals, assertMatch } from "../../tests/helpers/assert.ts";
import { reasonOfDetail, reasonOfStatus, transferRefusal } from "./transfer.ts";

Deno.test("a transfer goes ahead only on a phone call, to a tel:/sip: URI or an E.164 number", () => {
  for (const ok of ["tel:+14155550100", "sip:desk@pbx.example.com", "sips:a@b", "+918041234567"]) {
    assertEquals(transferRefusal(ok, true, false), undefined, ok);
  }
  assertMatch(transferRefusal("tel:+1", false, false)!, /web call/);
  for (const bad of ["", "4155550100", "+0123", "http://x", "sip:a b"]) {
    assertMatch(transferRefusal(bad, true, false)!, /must be a tel: or sip: URI/, bad);
  }
  assertMatch(transferRefusal("tel:+1", true, true)!, /already under way/);
});

Deno.test("a warm transfer's ring timeout is 0 or 5 to 120 s, and its whisper is bounded", () => {
  const warm = (ms: number, whisper = "Asha, billing.") => ({ whisper, ringTimeoutMs: ms });
  for (const ms of [0, 5000, 120_000]) {
    assertEquals(transferRefusal("sip:a@b", true, false, warm(ms)), undefined);
  }
  for (const ms of [1, 4999, 120_001]) {
    assertMatch(transferRefusal("sip:a@b", true, false, warm(ms))!, /ring_timeout_ms/);
  }
  // A cold transfer ignores the ring timeout, as the proto says.
  assertEquals(transferRefusal("sip:a@b", true, false, warm(1, "")), undefined);
  assertMatch(transferRefusal("sip:a@b", true, false, warm(0, "x".repeat(1001)))!, /at most 1000/);
});

Deno.test("a failed transfer's reason is read from the SIP status that says why", () => {
  assertEquals(reasonOfStatus(486), "busy");
  assertEquals(reasonOfStatus(600), "busy");
  assertEquals(reasonOfStatus(480), "no_answer");
  assertEquals(reasonOfStatus(603), "declined");
  assertEquals(reasonOfStatus(404), "declined");
  assertEquals(reasonOfStatus(503), "failed");
  assertEquals(reasonOfDetail("REFER answered 403 Forbidden"), "refused");
  assertEquals(reasonOfDetail("the transfer target answered 486 Busy Here"), "busy");
  assertEquals(reasonOfDetail("No final NOTIFY for the REFER."), "failed");
});
