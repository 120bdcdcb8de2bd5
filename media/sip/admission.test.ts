import { assertEquals } from "../../tests/helpers/assert.ts";
import { sessionToken } from "./admission.ts";
import { sipAnnouncedAddress } from "./phone_service.ts";

Deno.test("the session token is the Request-URI's session parameter, and only that", () => {
  assertEquals(sessionToken("sip:+15550100@10.0.0.5:5060;session=eyJ.a-b_c.d"), "eyJ.a-b_c.d");
  assertEquals(
    sessionToken("sip:+15550100@10.0.0.5:5060;transport=tcp;session=T1;lr"),
    "T1",
  );
  assertEquals(sessionToken("sips:+15550100@w;SESSION=T2"), "T2");
  for (const none of ["sip:+15550100@w", "sip:+15550100@w;session=", "tel:+15550100;session=T"]) {
    assertEquals(sessionToken(none), undefined, none);
  }
  // A header parameter (after ?) is not a URI parameter.
  assertEquals(sessionToken("sip:+15550100@w?session=T"), undefined);
});

Deno.test("Contact and SDP announce SIP_PUBLIC_ADDRESS, else a specific HOST, else the first ICE address", () => {
  const base = { host: "0.0.0.0", iceAddresses: ["203.0.113.7", "10.0.0.2"] };
  assertEquals(sipAnnouncedAddress({ ...base, sipPublicAddress: "198.51.100.1" }), "198.51.100.1");
  assertEquals(sipAnnouncedAddress({ ...base, host: "10.0.0.9" }), "10.0.0.9");
  assertEquals(sipAnnouncedAddress(base), "203.0.113.7");
  assertEquals(sipAnnouncedAddress({ host: "::", iceAddresses: [] }), "127.0.0.1");
});
