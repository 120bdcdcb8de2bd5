// The carrier registries (media/phone/carriers/registry.ts, api/telephony/carriers.ts) are the
// only lists of carriers: each name finds the carrier that answers to it on both sides, so the
// webhook's path, the worker's stream route and the session's phone_carrier agree.
import { assert, assertEquals } from "./helpers/assert.ts";
import { carrierNamed, CARRIERS as WORKER } from "../media/phone/carriers/registry.ts";
import { CARRIERS as CONTROL_PLANE } from "../api/telephony/carriers.ts";

Deno.test("each carrier answers to its own name on the worker and the control plane", () => {
  assertEquals(Object.keys(WORKER).sort(), Object.keys(CONTROL_PLANE).sort());
  for (const [name, carrier] of Object.entries(WORKER)) {
    assertEquals(carrier.name, name);
    assertEquals(carrier.dialect.carrier, name);
    assertEquals(carrierNamed(name), carrier);
    assertEquals(CONTROL_PLANE[carrier.name].name, name);
  }
});

Deno.test("a stream route names no carrier with a name no carrier has", () => {
  // Not even an object's own properties: the route takes any path segment.
  for (const name of ["sip", "Twilio", "", "toString", "constructor", "__proto__"]) {
    assertEquals(carrierNamed(name), undefined, name);
  }
});

Deno.test("a carrier's webhooks have distinct paths under its name", () => {
  for (const carrier of Object.values(CONTROL_PLANE)) {
    assert(carrier.webhooks.length > 0, carrier.name);
    const routes = carrier.webhooks.map((w) => `${w.method} ${w.path}`);
    assertEquals(new Set(routes).size, routes.length, carrier.name);
    for (const w of carrier.webhooks) assert(w.path === "" || w.path.startsWith("/"), w.path);
  }
});
