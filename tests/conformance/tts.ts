// What every synthesis provider must do (media/tts/engine.ts), checked against the provider's own
// fake: each provider's test calls synthesisConformance() with its fake and engine, as LiveKit's
// agents-js runs plugins/test/src/tts.ts for every TTS plugin. A provider that does not pass it is
// not done (docs/speech-providers.md, "Adding a provider"). What is the provider's alone (its wire
// format, its speakers, its error codes) stays in its own tests.
import { assert, assertEquals } from "../helpers/assert.ts";
import { checkProbe } from "./probe.ts";
import { abortAfterFirstChunk, collect, drain, waitFor } from "../helpers/streams.ts";
import { resample } from "../../wasm/resampler.ts";
import {
  type SynthesisEngine,
  SynthesisError,
  type SynthesisOptions,
  UnservedError,
} from "../../media/tts/engine.ts";
import { estimateWordTimings } from "../../media/tts/estimated_timing.ts";
import { wordSpans } from "../../media/tts/word_timing.ts";

/** How the suite needs a provider's fake to behave; each fake maps it onto its own options. */
export interface SynthesisFakeBehaviour {
  /** The key the fake accepts. */
  apiKey: string;
  /** Audio per character of text. */
  msPerChar?: number;
  /** Audio per piece the fake sends. */
  chunkMs?: number;
  /** Wait before each piece after the first (a slow provider, or a stalled one). */
  chunkDelayMs?: number;
  /** Cut the connection after this many pieces, the unit unfinished. */
  dropAfterChunks?: number;
}

/** A running fake, as the suite reads it. */
export interface SynthesisFake {
  url: string;
  /** Sockets or requests the engine opened so far, refused ones included. */
  opened(): number;
  /** Audio pieces the fake sent on the i-th. */
  sent(i: number): number;
  /** The engine let go of the i-th before the fake finished it (closed it, cancelled it). */
  released(i: number): boolean;
  close(): Promise<void>;
}

export interface SynthesisProvider {
  /** As its errors name it, e.g. "Sarvam". */
  provider: string;
  fake(behaviour: SynthesisFakeBehaviour): SynthesisFake;
  engine(url: string, options: { apiKey: string; readTimeoutMs?: number }): SynthesisEngine;
  /** The audio the fake makes for `text` at `msPerChar`, and its rate. */
  fakeAudio(text: string, msPerChar: number): { pcm: Int16Array; rate: number };
  /** A unit the engine serves: a few sentences, long enough for several pieces. */
  unit: { text: string } & Pick<SynthesisOptions, "voice" | "language">;
  /** A roster language the engine does not serve. */
  unservedLanguage: string;
}

const KEY = "test-key";
const WRONG = "wrong-secret-key";

export function synthesisConformance(p: SynthesisProvider): void {
  const { text, voice, language } = p.unit;
  const unit = { voice, language };
  const name = (what: string) => `${p.provider} synthesis conformance: ${what}`;

  async function withEngine(
    behaviour: Partial<SynthesisFakeBehaviour>,
    run: (engine: SynthesisEngine, fake: SynthesisFake) => Promise<void>,
    options: { apiKey?: string; readTimeoutMs?: number } = {},
  ): Promise<void> {
    const fake = p.fake({ apiKey: KEY, ...behaviour });
    const engine = p.engine(fake.url, { apiKey: options.apiKey ?? KEY, ...options });
    try {
      await run(engine, fake);
    } finally {
      await engine.close();
      await fake.close();
    }
  }

  Deno.test(name("the provider's audio comes out as 48 kHz mono of the same length"), async () => {
    await withEngine({ msPerChar: 70, chunkMs: 100 }, async (engine) => {
      const { chunks, pcm } = await collect(engine.synthesize(text, unit));
      const sent = p.fakeAudio(text, 70);
      // The very same signal, resampled: pieces of any size resample like the whole.
      const whole = resample(sent.pcm, sent.rate, 48000);
      assertEquals(pcm.length, whole.length);
      let worst = 0;
      for (let i = 0; i < pcm.length; i++) worst = Math.max(worst, Math.abs(pcm[i] - whole[i]));
      assert(worst <= 2, `differs from a one-shot resampling by ${worst}`);
      assert(chunks.length > 1, "the provider's pieces were not passed on as they came");
    });
  });

  Deno.test(name("every word of the unit is timed once, in order, on its own text"), async () => {
    await withEngine({}, async (engine) => {
      const { chunks, ms } = await collect(engine.synthesize(text, unit));
      const words = chunks.flatMap((c) => c.words);
      assertEquals(
        words.map((w) => [w.charStart, w.charEnd]),
        wordSpans(text).map((s) => [s.start, s.end]),
      );
      for (const w of words) assertEquals(text.slice(w.charStart, w.charEnd), w.text);
      for (let i = 1; i < words.length; i++) assert(words[i].startMs >= words[i - 1].endMs);
      assert(words.at(-1)!.endMs <= ms);
      if (engine.wordTimings === "estimated") {
        // Estimated timings come with the last chunk, over the whole unit's audio.
        for (const c of chunks.slice(0, -1)) assertEquals(c.words, []);
        assertEquals(words, estimateWordTimings(text, ms));
      }
    });
  });

  Deno.test(
    name("an unserved language or voice throws UnservedError at once, asking nothing"),
    async () => {
      await withEngine({}, (engine, fake) => {
        const elsewhere = { voice, language: p.unservedLanguage };
        assert(!engine.languages.includes(p.unservedLanguage));
        let err: unknown;
        try {
          engine.synthesize(text, elsewhere);
        } catch (e) {
          err = e;
        }
        assert(err instanceof UnservedError && err.kind === "language", String(err));
        try {
          engine.synthesize(text, { voice: "VOICE_NOBODY", language });
          err = undefined;
        } catch (e) {
          err = e;
        }
        assert(err instanceof UnservedError && err.kind === "voice", String(err));
        assertEquals(fake.opened(), 0);
        return Promise.resolve();
      });
    },
  );

  Deno.test(name("blank text makes no audio and asks nothing"), async () => {
    await withEngine({}, async (engine, fake) => {
      assertEquals((await collect(engine.synthesize("  \n", unit))).chunks, []);
      assertEquals(fake.opened(), 0);
    });
  });

  Deno.test(
    name("a wrong key is a SynthesisError with an auth fault that never shows the key"),
    async () => {
      await withEngine({}, async (engine) => {
        const { chunks, error } = await drain(engine.synthesize(text, unit));
        assertEquals(chunks, []);
        assert(error instanceof SynthesisError, String(error));
        assertEquals(error.fault, "auth");
        assert(error.message.includes(p.provider), error.message);
        assert(!error.message.includes(WRONG), error.message);
      }, { apiKey: WRONG });
    },
  );

  Deno.test(
    name("a connection dropped mid-unit fails it after the audio that came, unworded"),
    async () => {
      await withEngine({ dropAfterChunks: 3, chunkMs: 100 }, async (engine) => {
        const { chunks, error } = await drain(engine.synthesize(text, unit));
        assert(error instanceof SynthesisError, String(error));
        assert(!error.message.includes(KEY), error.message);
        assert(chunks.length >= 1, "the audio before the drop was not delivered");
        assert(chunks.every((c) => c.words.length === 0), "words reported for an unfinished unit");
      });
    },
  );

  Deno.test(
    name("a provider that stalls mid-unit for longer than the read timeout fails it"),
    async () => {
      // The stall (5 s) is far past the read timeout (200 ms), so a loaded host's delays cannot
      // be taken for the stall ending on its own.
      await withEngine({ chunkDelayMs: 5000 }, async (engine) => {
        const started = Date.now();
        const { error } = await drain(engine.synthesize(text, unit));
        assert(error instanceof SynthesisError, String(error));
        assert(error.message.includes(p.provider), error.message);
        assert(Date.now() - started < 3000, `failed after ${Date.now() - started} ms`);
      }, { readTimeoutMs: 200 });
    },
  );

  Deno.test(
    name("an abort stops the unit at once with its reason and lets the provider go"),
    async () => {
      await withEngine({ chunkDelayMs: 40, chunkMs: 50 }, async (engine, fake) => {
        const reason = new Error("barge-in");
        const { thrown, msAfterAbort } = await abortAfterFirstChunk(
          (signal) => engine.synthesize(text, { ...unit, signal }),
          reason,
        );
        assertEquals(thrown, reason);
        assert(msAfterAbort < 200, `the stream ended ${msAfterAbort} ms after the abort`);
        await waitFor(() => fake.released(0), "the provider to be let go");
        assert(fake.sent(0) < 10, "the fake kept sending after the abort");
      });
    },
  );

  Deno.test(name("an already aborted signal throws its reason and asks nothing"), async () => {
    await withEngine({}, async (engine, fake) => {
      const reason = new Error("too late");
      const aborted = { ...unit, signal: AbortSignal.abort(reason) };
      assertEquals((await drain(engine.synthesize(text, aborted))).error, reason);
      assertEquals(fake.opened(), 0);
    });
  });

  Deno.test(name("leaving the loop early lets the provider go"), async () => {
    await withEngine({ chunkDelayMs: 40, chunkMs: 50 }, async (engine, fake) => {
      for await (const _ of engine.synthesize(text, unit)) break;
      await waitFor(() => fake.released(0), "the provider to be let go", 500);
    });
  });

  Deno.test(name("closing the engine fails its open units; it then takes no more"), async () => {
    // The next chunk comes well after the close: at 40 ms a busy host let it arrive first.
    await withEngine({ chunkDelayMs: 400, chunkMs: 50 }, async (engine, fake) => {
      const stream = engine.synthesize(text, unit)[Symbol.asyncIterator]();
      await stream.next();
      const pending = stream.next();
      await engine.close();
      let err: unknown;
      await pending.catch((e) => err = e);
      assert(err instanceof SynthesisError && err.message === "engine closed", String(err));
      err = undefined;
      try {
        engine.synthesize(text, unit);
      } catch (e) {
        err = e;
      }
      assert(err instanceof SynthesisError, String(err));
      await waitFor(() => fake.released(0), "the provider to be let go");
    });
  });

  Deno.test(
    name(
      "the probe: accepted with the key and making no audio; a wrong key is auth; nowhere is connection",
    ),
    async () => {
      const fake = p.fake({ apiKey: KEY });
      await checkProbe(fake, (url, apiKey) => p.engine(url, { apiKey }), KEY, () => {
        for (let i = 0; i < fake.opened(); i++) {
          assertEquals(fake.sent(i), 0, "the probe made audio");
        }
      });
    },
  );
}
