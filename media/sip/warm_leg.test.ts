import { assertEquals, assertMatch } from "../../tests/helpers/assert.ts";
import { reachable } from "./warm_leg.ts";

Deno.test("a warm transfer rings a sip: URI's host, port and transport itself", () => {
  assertEquals(reachable("sip:desk@10.0.0.7"), {
    user: "desk",
    host: "10.0.0.7",
    port: 5060,
    transport: "UDP",
  });
  assertEquals(reachable("sip:2001@pbx.example.in:5080;transport=tcp"), {
    user: "2001",
    host: "pbx.example.in",
    port: 5080,
    transport: "TCP",
  });
  assertEquals(reachable("sip:agent@[2001:db8::5]:5062"), {
    user: "agent",
    host: "2001:db8::5",
    port: 5062,
    transport: "UDP",
  });
});

Deno.test("a number, a tel: URI, a sips: URI or a URI with no user is refused with what to do instead", () => {
  for (const target of ["+918041234567", "tel:+918041234567", "sip:pbx.example.in"]) {
    assertMatch(reachable(target) as string, /sip: URI with a user and a host/, target);
  }
  assertMatch(reachable("sips:desk@pbx") as string, /no SIP over TLS/);
  assertMatch(reachable("sip:desk@pbx:70000") as string, /not a port/);
});
