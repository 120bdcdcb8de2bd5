// With no engine left on the route, the one that failed gets one fresh try — a new recognition
// stream given the utterance again, a second synthesis attempt — logged as a fallback to itself
// (a crashed thread has been replaced by then). A second failure is the caller's to handle.
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { type RecognitionEngine, RecognitionError, type RecognitionStream } from "../stt/engine.ts";
import {
  catalogNames,
  type SynthesisChunk,
  type SynthesisEngine,
  SynthesisError,
} from "../tts/engine.ts";
import { type Fallback, RecognitionRouter, SynthesisRouter } from "./routing.ts";

/** Each stream counts the samples it got; its finish fails while `failures` lasts. */
class FlakyRecogniser implements RecognitionEngine {
  readonly name = "local";
  readonly kind = "local";
  readonly languages = ["LANGUAGE_EN"];
  failures = 0;
  opened = 0;
  open(): Promise<RecognitionStream> {
    this.opened++;
    let samples = 0;
    return Promise.resolve({
      push: (pcm: Int16Array) => void (samples += pcm.length),
      onInterim: () => {},
      finish: () => {
        const n = samples;
        samples = 0;
        if (this.failures > 0) {
          this.failures--;
          return Promise.reject(new RecognitionError("thread crashed"));
        }
        return Promise.resolve({ text: `heard ${n}`, audioMs: n / 16 });
      },
      close: () => {},
    });
  }
  close() {
    return Promise.resolve();
  }
}

Deno.test("recognition: the only engine is opened afresh once and given the utterance again", async () => {
  const engine = new FlakyRecogniser();
  const router = new RecognitionRouter([engine], {});
  const fallbacks: Fallback[] = [];
  const s = await router.open("LANGUAGE_EN", (f) => fallbacks.push(f));
  s.push(new Int16Array(1600));
  s.push(new Int16Array(1600));
  engine.failures = 1;
  assertEquals(await s.finish(), { text: "heard 3200", audioMs: 200, engine: "local" });
  assertEquals(engine.opened, 2);
  assertEquals(fallbacks.map((f) => [f.leg, f.from, f.to]), [["recognition", "local", "local"]]);
  assert(fallbacks[0].reason.includes("thread crashed"));
  // The fresh stream serves the rest of the call.
  s.push(new Int16Array(160));
  assertEquals((await s.finish()).text, "heard 160");

  // Failing on the fresh stream too: the failure is the call's.
  s.push(new Int16Array(160));
  engine.failures = 2;
  await s.finish().then(
    () => assert(false, "finish should reject"),
    (err) => assert(err instanceof RecognitionError),
  );
  assertEquals(engine.opened, 3);
  s.close();
});

/** Fails before any audio while `failures` lasts. */
class FlakySynthesizer implements SynthesisEngine {
  readonly name = "local";
  readonly kind = "local";
  readonly streaming = true;
  readonly sampleRate = 48000;
  readonly wordTimings = "estimated";
  readonly catalog = { LANGUAGE_EN: { VOICE_ANANYA: "a" } };
  readonly voices = catalogNames(this.catalog).voices;
  readonly languages = catalogNames(this.catalog).languages;
  failures = 0;
  calls = 0;
  async *synthesize(): AsyncIterable<SynthesisChunk> {
    this.calls++;
    await Promise.resolve();
    if (this.failures > 0) {
      this.failures--;
      throw new SynthesisError("espeak thread crashed");
    }
    yield { pcm: new Int16Array(960), words: [] };
  }
  close() {
    return Promise.resolve();
  }
}

Deno.test("synthesis: the last engine gets a second try before the unit fails", async () => {
  const engine = new FlakySynthesizer();
  const router = new SynthesisRouter([engine], {});
  const unit = async (onFallback?: (f: Fallback) => void) => {
    const out: string[] = [];
    const options = { voice: "VOICE_ANANYA", language: "LANGUAGE_EN", onFallback };
    for await (const c of router.synthesize("Hi.", options)) out.push(c.engine);
    return out;
  };
  const fallbacks: Fallback[] = [];
  engine.failures = 1;
  assertEquals(await unit((f) => fallbacks.push(f)), ["local"]);
  assertEquals(fallbacks.map((f) => [f.leg, f.from, f.to, f.reason]), [
    ["synthesis", "local", "local", "espeak thread crashed"],
  ]);
  engine.failures = 2;
  await unit().then(
    () => assert(false, "the unit should fail"),
    (err) => assert(err instanceof SynthesisError),
  );
  assertEquals(engine.calls, 4);
});
