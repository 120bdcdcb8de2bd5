// The routers count, per engine, the work outstanding now and the failures so far, for the
// node's metrics (voice_speech_engine_queue_depth, voice_speech_engine_errors_total). The engines
// are scripted stand-ins that finish when the test says so.
import { assertEquals } from "../../tests/helpers/assert.ts";
import { type RecognitionEngine, RecognitionError, type RecognitionStream } from "../stt/engine.ts";
import {
  catalogNames,
  type SynthesisChunk,
  type SynthesisEngine,
  SynthesisError,
} from "../tts/engine.ts";
import { RecognitionRouter, SynthesisRouter } from "./routing.ts";

/** finish() settles when the test calls `release` (or rejects with `fail`). */
class HeldRecogniser implements RecognitionEngine {
  kind = "local" as const;
  languages = ["LANGUAGE_EN"];
  failOpen = false;
  failFinish = false;
  #held: (() => void)[] = [];
  constructor(readonly name: string) {}
  open(): Promise<RecognitionStream> {
    if (this.failOpen) return Promise.reject(new RecognitionError(`${this.name} is down`));
    return Promise.resolve({
      push: () => {},
      onInterim: () => {},
      finish: () =>
        new Promise((resolve, reject) =>
          this.#held.push(() =>
            this.failFinish
              ? reject(new RecognitionError("dropped"))
              : resolve({ text: this.name, audioMs: 0 })
          )
        ),
      close: () => {},
    });
  }
  release() {
    for (const r of this.#held.splice(0)) r();
  }
  close() {
    return Promise.resolve();
  }
}

class OneChunkSynthesizer implements SynthesisEngine {
  kind = "provider" as const;
  streaming = true;
  sampleRate = 48000;
  wordTimings = "estimated" as const;
  voices: string[];
  languages: string[];
  fail = false;
  catalog = { LANGUAGE_EN: { VOICE_ARJUN: "v" } };
  constructor(readonly name: string) {
    ({ voices: this.voices, languages: this.languages } = catalogNames(this.catalog));
  }
  async *synthesize(): AsyncIterable<SynthesisChunk> {
    await Promise.resolve();
    if (this.fail) throw new SynthesisError(`${this.name}: HTTP 503`);
    yield { pcm: new Int16Array(960), words: [] };
  }
  close() {
    return Promise.resolve();
  }
}

const tick = () => new Promise((r) => setTimeout(r, 0));

Deno.test("recognition: utterances awaiting their text are outstanding; failures are counted", async () => {
  const first = new HeldRecogniser("first"), second = new HeldRecogniser("second");
  const router = new RecognitionRouter([first, second], {});
  assertEquals(router.activity.get("first"), { outstanding: 0, errors: 0 });

  const a = await router.open("LANGUAGE_EN"), b = await router.open("LANGUAGE_EN");
  const pending = [a.finish(), b.finish()];
  assertEquals(router.activity.get("first")!.outstanding, 2);
  first.release();
  await Promise.all(pending);
  assertEquals(router.activity.get("first"), { outstanding: 0, errors: 0 });

  // A failed finish is the first engine's error; the replay is outstanding at the second.
  first.failFinish = true;
  const replayed = a.finish();
  first.release();
  await tick();
  assertEquals(router.activity.get("first"), { outstanding: 0, errors: 1 });
  assertEquals(router.activity.get("second")!.outstanding, 1);
  second.release();
  assertEquals((await replayed).engine, "second");
  assertEquals(router.activity.get("second"), { outstanding: 0, errors: 0 });

  // An engine that cannot open is an error too.
  first.failOpen = true;
  const c = await router.open("LANGUAGE_EN");
  assertEquals(c.engine, "second");
  assertEquals(router.activity.get("first")!.errors, 2);
  for (const s of [a, b, c]) s.close();
});

Deno.test("synthesis: units being made are outstanding; failures count, cancellations do not", async () => {
  const provider = new OneChunkSynthesizer("provider"), local = new OneChunkSynthesizer("local");
  const router = new SynthesisRouter([provider, local], {});
  const options = { voice: "VOICE_ARJUN", language: "LANGUAGE_EN" };

  const it = router.synthesize("hi", options)[Symbol.asyncIterator]();
  await it.next();
  assertEquals(router.activity.get("provider")!.outstanding, 1, "made, not yet finished");
  assertEquals((await it.next()).done, true);
  assertEquals(router.activity.get("provider"), { outstanding: 0, errors: 0 });

  // Left early (the speaker cut the unit): no longer outstanding, not an error.
  const cut = router.synthesize("hi", options)[Symbol.asyncIterator]();
  await cut.next();
  await cut.return?.();
  assertEquals(router.activity.get("provider"), { outstanding: 0, errors: 0 });

  // A failure before audio is the provider's error; the local engine makes the unit.
  provider.fail = true;
  const engines: string[] = [];
  for await (const c of router.synthesize("hi", options)) engines.push(c.engine);
  assertEquals(engines, ["local"]);
  assertEquals(router.activity.get("provider"), { outstanding: 0, errors: 1 });
  assertEquals(router.activity.get("local"), { outstanding: 0, errors: 0 });

  // Aborted: the engine's error is the abort's, not counted.
  const ac = new AbortController();
  ac.abort(new Error("cut off"));
  await (async () => {
    for await (const _ of router.synthesize("hi", { ...options, signal: ac.signal })) { /* */ }
  })().catch(() => {});
  assertEquals(router.activity.get("provider")!.errors, 1);
  assertEquals(router.activity.get("provider")!.outstanding, 0);
});
