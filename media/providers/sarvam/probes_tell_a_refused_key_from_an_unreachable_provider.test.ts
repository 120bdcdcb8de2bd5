// Sarvam's probes beyond what every provider's does (tests/conformance/: accepted with the key and
// doing no work, a wrong key an `auth` fault, nobody there a `connection` fault): Saaras's refusal
// by a close after the upgrade, and Bulbul's probe sending no text. The breakers
// (media/engines/breaker.ts) act on these faults.
import { assertEquals } from "../../../tests/helpers/assert.ts";
import { startFakeSarvamStt } from "../../../tests/fakes/sarvam_stt.ts";
import { startFakeSarvamTts } from "../../../tests/fakes/sarvam_tts.ts";
import { SarvamRecognitionEngine } from "./stt.ts";
import { SarvamSynthesisEngine } from "./tts.ts";
import { outcome } from "../../../tests/conformance/probe.ts";

Deno.test("Saaras's probe: a key refused by a close just after the upgrade is a refused key", async () => {
  // The refusal at the upgrade, and nobody there, are tests/conformance/stt.ts's.
  for (const refuseAuth of ["close"] as const) {
    const fake = startFakeSarvamStt({ apiKey: "right", refuseAuth });
    try {
      const right = new SarvamRecognitionEngine({ apiKey: "right", url: fake.url });
      const wrong = new SarvamRecognitionEngine({ apiKey: "wrong", url: fake.url });
      assertEquals(await outcome(() => right.probe()), "accepted");
      assertEquals(await outcome(() => wrong.probe()), "auth", refuseAuth);
      assertEquals(fake.utterances, 0); // nothing recognised
      assertEquals(fake.violations, []);
      await right.close();
      await wrong.close();
    } finally {
      await fake.close();
    }
  }
});

Deno.test("Bulbul's probe opens the socket and closes it before any config or text", async () => {
  // The rest of its probe (auth, connection, no audio) is tests/conformance/tts.ts's.
  const fake = startFakeSarvamTts({ apiKey: "right" });
  try {
    const right = new SarvamSynthesisEngine({ apiKey: "right", url: fake.url });
    assertEquals(await outcome(() => right.probe()), "accepted");
    assertEquals(fake.received.length, 1);
    assertEquals(fake.received[0].messages, []); // nothing synthesized, no character billed
  } finally {
    await fake.close();
  }
});
