// The router tries a route's engines in order: recognition replays the utterance to the next
// engine when one fails mid-call, synthesis moves on only while no audio has gone out. The
// engines here are scripted stand-ins for the router's own test (real engines have theirs).
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import {
  type RecognitionEngine,
  RecognitionError,
  type RecognitionStream,
  UnservedLanguageError,
} from "../stt/engine.ts";
import {
  catalogNames,
  type SynthesisChunk,
  type SynthesisEngine,
  SynthesisError,
  UnservedError,
} from "../tts/engine.ts";
import { type Fallback, RecognitionRouter, SynthesisRouter } from "./routing.ts";

/** Recognises by counting: its text is "<name> heard <samples>"; can be told to fail. */
class CountingRecogniser implements RecognitionEngine {
  kind = "local" as const;
  failOpen = false;
  failFinish = false;
  opened = 0;
  constructor(readonly name: string, readonly languages: string[]) {}
  open(language: string): Promise<RecognitionStream> {
    if (!this.languages.includes(language)) {
      return Promise.reject(new UnservedLanguageError(language, this.name, this.languages));
    }
    if (this.failOpen) return Promise.reject(new RecognitionError(`${this.name} is down`));
    this.opened++;
    let samples = 0;
    let interim: (t: string) => void = () => {};
    return Promise.resolve({
      push: (pcm: Int16Array) => {
        samples += pcm.length;
        interim(`${this.name} hearing ${samples}`);
      },
      onInterim: (cb: (t: string) => void) => interim = cb,
      finish: () => {
        const n = samples;
        samples = 0;
        if (this.failFinish) return Promise.reject(new RecognitionError("connection dropped"));
        return Promise.resolve({ text: `${this.name} heard ${n}`, audioMs: n / 16 });
      },
      close: () => {},
    });
  }
  close() {
    return Promise.resolve();
  }
}

Deno.test("recognition falls back to the next engine of the route", async (t) => {
  const provider = new CountingRecogniser("provider", ["LANGUAGE_EN", "LANGUAGE_HI"]);
  const local = new CountingRecogniser("local", ["LANGUAGE_EN"]);
  const router = new RecognitionRouter([provider, local], {});

  await t.step("a language goes to the first engine that serves it", async () => {
    const fallbacks: Fallback[] = [];
    const s = await router.open("LANGUAGE_EN", (f) => fallbacks.push(f));
    s.push(new Int16Array(1600));
    assertEquals(await s.finish(), {
      text: "provider heard 1600",
      audioMs: 100,
      engine: "provider",
    });
    assertEquals(fallbacks, []);
    s.close();
  });

  await t.step("an engine that cannot open gives way at once", async () => {
    provider.failOpen = true;
    const fallbacks: Fallback[] = [];
    const s = await router.open("LANGUAGE_EN", (f) => fallbacks.push(f));
    assertEquals(s.engine, "local");
    assertEquals(fallbacks.map((f) => [f.from, f.to]), [["provider", "local"]]);
    s.close();
    provider.failOpen = false;
  });

  await t.step("a failure mid-call replays the utterance to the next engine", async () => {
    const fallbacks: Fallback[] = [];
    const interims: string[] = [];
    const s = await router.open("LANGUAGE_EN", (f) => fallbacks.push(f));
    s.onInterim((text) => interims.push(text));
    s.push(new Int16Array(800));
    s.push(new Int16Array(800));
    provider.failFinish = true;
    // The whole utterance, both pushes, reaches the fallback: the caller's words are not lost.
    assertEquals(await s.finish(), { text: "local heard 1600", audioMs: 100, engine: "local" });
    assertEquals(fallbacks.length, 1);
    assertEquals([fallbacks[0].leg, fallbacks[0].from, fallbacks[0].to], [
      "recognition",
      "provider",
      "local",
    ]);
    assert(fallbacks[0].reason.includes("connection dropped"));
    // The fallback serves the rest of the call, interims included.
    s.push(new Int16Array(320));
    assertEquals(interims.at(-1), "local hearing 320");
    assertEquals((await s.finish()).engine, "local");
    s.close();
    provider.failFinish = false;
  });

  await t.step("with no engine left the failure is the utterance's", async () => {
    const s = await router.open("LANGUAGE_HI");
    provider.failFinish = true;
    s.push(new Int16Array(160));
    await s.finish().then(
      () => assert(false, "finish should reject"),
      (err) => assert(err instanceof RecognitionError),
    );
    provider.failFinish = false;
    s.close();
  });

  await t.step("a language no engine serves is refused at open", async () => {
    await router.open("LANGUAGE_TA").then(
      () => assert(false, "open should reject"),
      (err) => assert(err instanceof UnservedLanguageError),
    );
  });

  await t.step("routes reorder engines per language", async () => {
    const routed = new RecognitionRouter([provider, local], {
      recognition: { LANGUAGE_EN: ["local", "provider"] },
    });
    assertEquals(routed.route("LANGUAGE_EN").map((e) => e.name), ["local", "provider"]);
    assertEquals(routed.route("LANGUAGE_HI").map((e) => e.name), ["provider"]);
    const s = await routed.open("LANGUAGE_EN");
    assertEquals(s.engine, "local");
    s.close();
  });
});

/** Makes `chunks` chunks of 20 ms; can fail before the first or after the first. */
class ScriptedSynthesizer implements SynthesisEngine {
  kind = "provider" as const;
  streaming = true;
  sampleRate = 48000;
  wordTimings = "estimated" as const;
  voices: string[];
  languages: string[];
  fail: "before" | "after" | null = null;
  calls = 0;
  constructor(readonly name: string, readonly catalog: Record<string, Record<string, string>>) {
    ({ voices: this.voices, languages: this.languages } = catalogNames(catalog));
  }
  async *synthesize(): AsyncIterable<SynthesisChunk> {
    this.calls++;
    if (this.fail === "before") throw new SynthesisError(`${this.name}: HTTP 503`);
    for (let i = 0; i < 3; i++) {
      yield { pcm: new Int16Array(960).fill(1000), words: [] };
      await Promise.resolve();
      if (this.fail === "after") throw new SynthesisError(`${this.name}: connection dropped`);
    }
  }
  close() {
    return Promise.resolve();
  }
}

Deno.test("synthesis falls back to the next engine only before the first audio", async (t) => {
  const both = { VOICE_ANANYA: "a", VOICE_ARJUN: "b" };
  const provider = new ScriptedSynthesizer("provider", { LANGUAGE_HI: both });
  const local = new ScriptedSynthesizer("local", { LANGUAGE_HI: both, LANGUAGE_EN: both });
  const router = new SynthesisRouter([provider, local], {});
  const unit = async (language = "LANGUAGE_HI", onFallback?: (f: Fallback) => void) => {
    const engines: string[] = [];
    for await (
      const c of router.synthesize("नमस्ते", { voice: "VOICE_ARJUN", language, onFallback })
    ) engines.push(c.engine);
    return engines;
  };

  await t.step("chunks say which engine made them", async () => {
    assertEquals(await unit(), ["provider", "provider", "provider"]);
    assertEquals(await unit("LANGUAGE_EN"), ["local", "local", "local"]);
  });

  await t.step("an engine that fails before any audio gives way to the next", async () => {
    provider.fail = "before";
    const fallbacks: Fallback[] = [];
    assertEquals(await unit("LANGUAGE_HI", (f) => fallbacks.push(f)), ["local", "local", "local"]);
    assertEquals(fallbacks.map((f) => [f.leg, f.from, f.to, f.reason]), [
      ["synthesis", "provider", "local", "provider: HTTP 503"],
    ]);
  });

  await t.step("a failure after audio went out is the unit's, not another voice's", async () => {
    provider.fail = "after";
    const calls = local.calls;
    const engines: string[] = [];
    try {
      for await (
        const c of router.synthesize("नमस्ते", { voice: "VOICE_ARJUN", language: "LANGUAGE_HI" })
      ) engines.push(c.engine);
      assert(false, "the stream should throw");
    } catch (err) {
      assert(err instanceof SynthesisError);
    }
    assertEquals(engines, ["provider"]);
    assertEquals(local.calls, calls);
    provider.fail = null;
  });

  await t.step("an unserved language or voice is refused at once", () => {
    let err: unknown;
    try {
      router.synthesize("x", { voice: "VOICE_ARJUN", language: "LANGUAGE_TA" });
    } catch (e) {
      err = e;
    }
    assert(err instanceof UnservedError && err.kind === "language");
    try {
      router.synthesize("x", { voice: "VOICE_NOBODY", language: "LANGUAGE_HI" });
    } catch (e) {
      err = e;
    }
    assert(err instanceof UnservedError && err.kind === "voice");
  });
});
