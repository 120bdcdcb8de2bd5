// Indic Parler's probe beyond what every provider's does (tests/conformance/tts.ts: accepted with
// the key and making no audio, a wrong key an `auth` fault, nobody there a `connection` fault): a
// server answering 5xx is a `connection` fault too. The breakers (media/engines/breaker.ts) act on
// these faults.
import { assertEquals } from "../../../tests/helpers/assert.ts";
import { startFakeIndicParler } from "../../../tests/fakes/indic_parler.ts";
import { IndicParlerEngine } from "./tts.ts";

Deno.test("Indic Parler's probe: a server that answers 503 is a connection fault", async () => {
  const fake = startFakeIndicParler({ apiKey: "right", errorStatus: 503 });
  try {
    const right = new IndicParlerEngine({ apiKey: "right", url: fake.url });
    const fault = await right.probe().then(() => "accepted", (err) => err.fault);
    assertEquals(fault, "connection");
  } finally {
    await fake.close();
  }
});
