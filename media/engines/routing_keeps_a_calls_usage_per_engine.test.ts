// A call's usage is what its routers served it: recognised audio per engine that recognised it
// (a fallback's replay counts for the engine that finished it), characters handed to synthesis
// in all, and per engine whose audio they became. Scripted stand-in engines, as in the router's
// other tests.
import { assertEquals } from "../../tests/helpers/assert.ts";
import { type RecognitionEngine, RecognitionError, type RecognitionStream } from "../stt/engine.ts";
import {
  catalogNames,
  type SynthesisChunk,
  type SynthesisEngine,
  SynthesisError,
} from "../tts/engine.ts";
import { CallUsage, RecognitionRouter, SynthesisRouter } from "./routing.ts";

/** Resolves every utterance with the audio it was pushed; can be told to fail its finish. */
class Recogniser implements RecognitionEngine {
  kind = "local" as const;
  failFinish = false;
  constructor(readonly name: string, readonly languages: string[]) {}
  open(): Promise<RecognitionStream> {
    let samples = 0;
    return Promise.resolve({
      push: (pcm: Int16Array) => void (samples += pcm.length),
      onInterim: () => {},
      finish: () => {
        const n = samples;
        samples = 0;
        if (this.failFinish) return Promise.reject(new RecognitionError("dropped"));
        return Promise.resolve({ text: "words", audioMs: n / 16 });
      },
      close: () => {},
    });
  }
  close() {
    return Promise.resolve();
  }
}

class Synthesizer implements SynthesisEngine {
  kind = "provider" as const;
  streaming = true;
  sampleRate = 48000;
  wordTimings = "estimated" as const;
  voices: string[];
  languages: string[];
  failBefore = false;
  constructor(readonly name: string, readonly catalog: Record<string, Record<string, string>>) {
    ({ voices: this.voices, languages: this.languages } = catalogNames(catalog));
  }
  async *synthesize(): AsyncIterable<SynthesisChunk> {
    if (this.failBefore) throw new SynthesisError(`${this.name}: HTTP 503`);
    yield { pcm: new Int16Array(960), words: [] };
    await Promise.resolve();
  }
  close() {
    return Promise.resolve();
  }
}

Deno.test("recognised seconds count for the engine that recognised each utterance, across streams", async () => {
  const provider = new Recogniser("provider", ["LANGUAGE_EN", "LANGUAGE_HI"]);
  const local = new Recogniser("local", ["LANGUAGE_EN"]);
  const router = new RecognitionRouter([provider, local], {});
  const usage = new CallUsage();
  const en = await router.open("LANGUAGE_EN", undefined, usage);
  en.push(new Int16Array(16_000)); // 1 s, recognised by the provider
  await en.finish();
  provider.failFinish = true;
  en.push(new Int16Array(8_000)); // 0.5 s: the provider fails, the local engine hears the replay
  await en.finish();
  provider.failFinish = false;
  // A language change opens another stream; the call's usage goes on in the same record.
  const hi = await router.open("LANGUAGE_HI", undefined, usage);
  hi.push(new Int16Array(32_000));
  await hi.finish();
  assertEquals(usage.record(), {
    recognisedSeconds: 3.5,
    synthesizedCharacters: 0,
    byEngine: { provider: { recognised_seconds: 3 }, local: { recognised_seconds: 0.5 } },
  });
});

Deno.test("synthesized characters count in all when handed over, per engine when its audio came", async () => {
  const voices = { VOICE_A: "a" };
  const provider = new Synthesizer("provider", { LANGUAGE_EN: voices });
  const local = new Synthesizer("local", { LANGUAGE_EN: voices });
  const router = new SynthesisRouter([provider, local], {});
  const usage = new CallUsage();
  const speak = async (text: string, signal?: AbortSignal) => {
    const options = { voice: "VOICE_A", language: "LANGUAGE_EN", usage, signal };
    try {
      for await (const _ of router.synthesize(text, options)) { /* played */ }
    } catch { /* counted all the same */ }
  };
  await speak("Hello."); // provider
  provider.failBefore = true;
  await speak("Good morning."); // the local engine takes over
  local.failBefore = true;
  await speak("Nobody."); // no engine made audio: handed over, by no engine
  const aborted = new AbortController();
  aborted.abort();
  provider.failBefore = local.failBefore = false;
  await speak("Cut.", aborted.signal); // cut before its audio: no engine's
  assertEquals(usage.record(), {
    recognisedSeconds: 0,
    synthesizedCharacters: "Hello.".length + "Good morning.".length + "Nobody.".length + 4,
    byEngine: {
      provider: { synthesized_characters: "Hello.".length },
      local: { synthesized_characters: "Good morning.".length },
    },
  });
});
