// Indic Parler's probe against its fake: accepted with the right key (no audio made), a wrong key
// an `auth` fault, a 5xx or a server that cannot be reached a `connection` fault. The breakers
// (media/engines/breaker.ts) act on these faults.
import { assert, assertEquals } from "../../../tests/helpers/assert.ts";
import { freePort } from "../../../tests/helpers/process.ts";
import { startFakeIndicParler } from "../../../tests/fakes/indic_parler.ts";
import { IndicParlerEngine } from "./tts.ts";

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

Deno.test("Indic Parler's probe: an empty input, refused before any audio; 401 is a refused key", async () => {
  const fake = startFakeIndicParler({ apiKey: "right" });
  try {
    const right = new IndicParlerEngine({ apiKey: "right", url: fake.url });
    const wrong = new IndicParlerEngine({ apiKey: "wrong", url: fake.url });
    assertEquals(await outcome(() => right.probe()), "accepted");
    assertEquals(await outcome(() => wrong.probe()), "auth");
    assert(fake.received.every((r) => r.chunks === 0), "the probe made audio");
    fake.options.errorStatus = 503;
    assertEquals(await outcome(() => right.probe()), "connection");
  } finally {
    await fake.close();
  }
  const away = new IndicParlerEngine({ url: nowhere().replace("ws:", "http:") });
  assertEquals(await outcome(() => away.probe()), "connection");
});
