import { assertEquals, assertMatch } from "../../tests/helpers/assert.ts";
import { reachable, route } from "./warm_leg.ts";

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

Deno.test("a sips: URI, a URI with no user or a bad port is refused with what to do instead", () => {
  for (const target of ["+918041234567", "tel:+918041234567", "sip:pbx.example.in"]) {
    assertMatch(reachable(target) as string, /sip: URI with a user and a host/, target);
  }
  assertMatch(reachable("sips:desk@pbx") as string, /no SIP over TLS/);
  assertMatch(reachable("sip:desk@pbx:70000") as string, /not a port/);
});

const TRUNK = {
  trunk_id: "trk_in",
  outbound_address: "sbc.example.in:5060",
  outbound_transport: "udp" as const,
  credentials: false,
};

Deno.test("a number or a tel: URI rings through the call's trunk at its outbound address and transport", () => {
  const via = {
    user: "+918041234567",
    host: "sbc.example.in",
    port: 5060,
    transport: "UDP" as const,
  };
  assertEquals(route("+918041234567", TRUNK), via);
  assertEquals(route("tel:+918041234567", TRUNK), via);
  assertEquals(route("tel:+918041234567;phone-context=+91", TRUNK), via);
  assertEquals(
    route("+918041234567", {
      ...TRUNK,
      outbound_address: "[2001:db8::9]:5080",
      outbound_transport: "tcp",
    }),
    { user: "+918041234567", host: "2001:db8::9", port: 5080, transport: "TCP" },
  );
  // A sip: URI is rung directly whatever the trunk.
  assertEquals(route("sip:desk@10.0.0.7", TRUNK), reachable("sip:desk@10.0.0.7"));
  assertEquals(route("sip:desk@10.0.0.7", undefined), reachable("sip:desk@10.0.0.7"));
});

Deno.test("a number is refused on a call with no trunk, a trunk with no outbound address or one with credentials", () => {
  assertMatch(route("+918041234567", undefined) as string, /came in on no trunk/);
  assertMatch(
    route("+918041234567", { ...TRUNK, outbound_address: null }) as string,
    /trk_in has no outbound_address/,
  );
  assertMatch(
    route("tel:+918041234567", { ...TRUNK, credentials: true }) as string,
    /trk_in asks for outbound credentials, which the worker does not hold/,
  );
  for (const bad of ["+91", "tel:918041234567", "+0918041234567", "tel:+91-80-4123"]) {
    assertMatch(route(bad, TRUNK) as string, /not an E\.164 number/, bad);
  }
});
