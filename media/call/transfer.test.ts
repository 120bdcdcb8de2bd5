import { assertEquals, assertMatch } from "../../tests/helpers/assert.ts";
import { transferRefusal } from "./transfer.ts";

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
