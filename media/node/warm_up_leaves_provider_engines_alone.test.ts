// A worker warms only its local engines: a provider's first request would be billed, counted as
// usage, and behind a fake recogniser it took the transcript meant for the first call.
import { assertEquals } from "../../tests/helpers/assert.ts";
import { warmEngines } from "./warm_up.ts";
import type { CallEngines } from "../engines/call_engines.ts";

function enginesRoutedTo(recognition: string, synthesis: string, asked: string[]): CallEngines {
  return {
    vad: () =>
      Promise.resolve({
        push: () => Promise.resolve([]),
        close: () => {},
      }),
    recognition: {
      route: () => [{ name: recognition }],
      open: () => {
        asked.push(recognition);
        return Promise.resolve({ push: () => {}, close: () => {} });
      },
    },
    synthesis: {
      route: () => [{ name: synthesis }],
      synthesize: async function* () {
        asked.push(synthesis);
        yield* [];
      },
    },
  } as unknown as CallEngines;
}

const quiet = { warn: () => {} };

Deno.test("a worker warms its local engines and leaves provider engines alone", async () => {
  const asked: string[] = [];
  await warmEngines(enginesRoutedTo("sarvam-saaras", "sarvam-bulbul", asked), quiet);
  assertEquals(asked, [], "a provider was asked for speech at start-up");
  await warmEngines(enginesRoutedTo("pocketsphinx", "espeak-ng", asked), quiet);
  assertEquals(asked.sort(), ["espeak-ng", "pocketsphinx"]);
});
