// With breakers (engine_health.ts), the routers skip an engine that is down without asking it: a
// refused key found by one unit sends the next units straight to the next engine, and a route
// whose engines are all down fails as the engines' failure, not as an unserved language.
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { setQuiet } from "../../common/log.ts";
import { type RecognitionEngine, RecognitionError, type RecognitionStream } from "../stt/engine.ts";
import {
  catalogNames,
  type SynthesisChunk,
  type SynthesisEngine,
  SynthesisError,
} from "../tts/engine.ts";
import { EngineHealth } from "./engine_health.ts";
import { type Fallback, RecognitionRouter, SynthesisRouter } from "./routing.ts";

setQuiet(true);

const refused = () => new SynthesisError("HTTP 403", { fault: "auth" });

/** One chunk per unit, or the failure the test sets; counts the times it is asked. */
class Synthesizer implements SynthesisEngine {
  kind = "provider" as const;
  streaming = true;
  sampleRate = 48000;
  wordTimings = "estimated" as const;
  voices: string[];
  languages: string[];
  catalog = { LANGUAGE_HI: { VOICE_ANANYA: "a" } };
  asked = 0;
  failWith: (() => Error) | null = null;
  constructor(readonly name: string) {
    ({ voices: this.voices, languages: this.languages } = catalogNames(this.catalog));
  }
  async *synthesize(): AsyncIterable<SynthesisChunk> {
    this.asked++;
    await Promise.resolve();
    if (this.failWith) throw this.failWith();
    yield { pcm: new Int16Array(960), words: [] };
  }
  close() {
    return Promise.resolve();
  }
}

class Recogniser implements RecognitionEngine {
  kind = "provider" as const;
  languages = ["LANGUAGE_HI"];
  asked = 0;
  refuse = false;
  constructor(readonly name: string) {}
  open(): Promise<RecognitionStream> {
    this.asked++;
    if (this.refuse) {
      return Promise.reject(new RecognitionError("HTTP 403", { fault: "auth" }));
    }
    return Promise.resolve({
      push: () => {},
      onInterim: () => {},
      finish: () => Promise.resolve({ text: this.name, audioMs: 0 }),
      close: () => {},
    });
  }
  close() {
    return Promise.resolve();
  }
}

/** What `work` rejects with; it must be an `type` whose message holds `says`. */
async function assertRejects(
  work: () => Promise<unknown>,
  type: new (...args: never[]) => Error,
  says: string,
): Promise<void> {
  const err = await work().then(() => undefined, (e) => e);
  assert(err instanceof type && err.message.includes(says), `rejected with ${err}`);
}

async function speak(router: SynthesisRouter, fallbacks: Fallback[] = []): Promise<string[]> {
  const engines: string[] = [];
  for await (
    const c of router.synthesize("नमस्ते", {
      language: "LANGUAGE_HI",
      voice: "VOICE_ANANYA",
      onFallback: (f) => fallbacks.push(f),
    })
  ) engines.push(c.engine);
  return engines;
}

Deno.test("a unit refused for its key takes the engine out: the next units do not ask it", async () => {
  const bulbul = new Synthesizer("bulbul"), parler = new Synthesizer("parler");
  const health = new EngineHealth([
    { name: "bulbul", leg: "synthesis", probe: () => Promise.resolve() },
    { name: "parler", leg: "synthesis" },
  ]);
  await health.start();
  const router = new SynthesisRouter([bulbul, parler], {}, health);
  bulbul.failWith = refused;
  const fallbacks: Fallback[] = [];
  assertEquals(await speak(router, fallbacks), ["parler"]);
  assertEquals(fallbacks.map((f) => [f.from, f.to]), [["bulbul", "parler"]]);
  assertEquals(health.up("bulbul"), false);
  for (let i = 0; i < 5; i++) assertEquals(await speak(router), ["parler"]);
  assertEquals([bulbul.asked, parler.asked], [1, 6]);
  health.close();
});

Deno.test("recognition skips a down engine, and fails as an engine failure when none is up", async () => {
  const saaras = new Recogniser("saaras"), other = new Recogniser("other");
  const health = new EngineHealth([
    { name: "saaras", leg: "recognition", probe: () => Promise.reject(refused()) },
    { name: "other", leg: "recognition", probe: () => Promise.resolve() },
  ]);
  await health.start();
  const router = new RecognitionRouter([saaras, other], {}, health);
  const stream = await router.open("LANGUAGE_HI");
  assertEquals([stream.engine, saaras.asked], ["other", 0]);
  stream.close();
  // The other one's key is refused too.
  other.refuse = true;
  await assertRejects(() => router.open("LANGUAGE_HI"), RecognitionError, "HTTP 403");
  await assertRejects(() => router.open("LANGUAGE_HI"), RecognitionError, "no engine");
  assertEquals([saaras.asked, other.asked], [0, 2]);
  health.close();
});

Deno.test("synthesis with every engine of the route down fails without asking any", async () => {
  const bulbul = new Synthesizer("bulbul");
  const health = new EngineHealth([
    { name: "bulbul", leg: "synthesis", probe: () => Promise.reject(refused()) },
  ]);
  await health.start();
  const router = new SynthesisRouter([bulbul], {}, health);
  await assertRejects(() => speak(router), SynthesisError, "no engine speaking LANGUAGE_HI is up");
  assertEquals(bulbul.asked, 0);
  health.close();
});
