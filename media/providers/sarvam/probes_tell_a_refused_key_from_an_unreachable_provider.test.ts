// Sarvam's probes against its fakes: accepted with the right key (and nothing synthesized or
// recognised), refused with a wrong one as an `auth` fault, and a provider that cannot be reached
// as a `connection` fault; a unit refused for its key says `auth` too. The breakers
// (media/engines/breaker.ts) act on these faults.
import { assertEquals } from "../../../tests/helpers/assert.ts";
import { freePort } from "../../../tests/helpers/process.ts";
import { startFakeSarvamStt } from "../../../tests/fakes/sarvam_stt.ts";
import { startFakeSarvamTts } from "../../../tests/fakes/sarvam_tts.ts";
import { SarvamRecognitionEngine } from "./stt.ts";
import { SarvamSynthesisEngine } from "./tts.ts";

/** The fault a probe (or any work) failed with; "accepted" when it did not fail. */
async function outcome(work: () => Promise<unknown>): Promise<string> {
  try {
    await work();
    return "accepted";
  } catch (err) {
    return (err as { fault?: string }).fault ?? `no fault: ${(err as Error).message}`;
  }
}

const nowhere = () => `ws://127.0.0.1:${freePort()}`;

Deno.test("Saaras's probe: a session begun with the key, refused without it (at the upgrade or just after)", async () => {
  for (const refuseAuth of ["http", "close"] as const) {
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
  const away = new SarvamRecognitionEngine({ apiKey: "right", url: nowhere() });
  assertEquals(await outcome(() => away.probe()), "connection");
  await away.close();
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
