// What every recognition provider must do (media/stt/engine.ts), checked against the provider's
// own fake: each provider's test calls recognitionConformance() with its fake and engine, as
// LiveKit's agents-js runs plugins/test/src/stt.ts for every STT plugin. A provider that does not
// pass it is not done (docs/speech-providers.md, "Adding a provider"). What is the provider's
// alone (its wire format, its error events, its timeouts) stays in its own tests.
import { assert, assertEquals } from "../helpers/assert.ts";
import { checkProbe } from "./probe.ts";
import { waitFor } from "../helpers/streams.ts";
import {
  type RecognitionEngine,
  RecognitionError,
  type RecognitionStream,
  UnservedLanguageError,
} from "../../media/stt/engine.ts";

/** How the suite needs a provider's fake to behave; each fake maps it onto its own options. */
export interface RecognitionFakeBehaviour {
  /** The key the fake accepts. */
  apiKey: string;
  /** What the caller said, one per utterance in order ("" once they run out). */
  transcripts?: string[];
  /** One more word of the current utterance is recognised per this much audio. */
  wordEveryMs?: number;
  /** Every final transcript this late. */
  finalDelayMs?: number;
  /** Cut the connection once this much audio of the first utterance has arrived. */
  dropFirstUtteranceAfterMs?: number;
}

/** A running fake, as the suite reads it. */
export interface RecognitionFake {
  url: string;
  /** Connections or requests the engine made so far, refused ones included. */
  opened(): number;
  /** The 16 kHz samples that reached the provider, every connection's in order. */
  heard(): Int16Array;
  /** The fake cut the connection it was told to. */
  dropped(): boolean;
  close(): Promise<void>;
}

export interface RecognitionProvider {
  /** As its errors name it, e.g. "Sarvam". */
  provider: string;
  fake(behaviour: RecognitionFakeBehaviour): RecognitionFake;
  engine(url: string, options: { apiKey: string }): RecognitionEngine;
  /** A language the engine serves. */
  language: string;
  /** A roster language, or none at all, that the engine does not serve. */
  unservedLanguage: string;
}

const KEY = "test-key";
const WRONG = "wrong-secret-key";

/** `ms` of 16 kHz samples that differ from one another, negatives included. */
function pcm(ms: number): Int16Array {
  return Int16Array.from({ length: ms * 16 }, (_, i) => ((i * 7919) % 65536) - 32768);
}

/** As the worker does: 20 ms frames. */
function speak(stream: RecognitionStream, audio: Int16Array): void {
  for (let i = 0; i < audio.length; i += 320) stream.push(audio.subarray(i, i + 320));
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error("expected a rejection");
}

export function recognitionConformance(p: RecognitionProvider): void {
  const name = (what: string) => `${p.provider} recognition conformance: ${what}`;

  async function withEngine(
    behaviour: Partial<RecognitionFakeBehaviour>,
    run: (engine: RecognitionEngine, fake: RecognitionFake) => Promise<void>,
    apiKey = KEY,
  ): Promise<void> {
    const fake = p.fake({ apiKey: KEY, ...behaviour });
    const engine = p.engine(fake.url, { apiKey });
    try {
      await run(engine, fake);
    } finally {
      await engine.close();
      await fake.close();
    }
  }

  Deno.test(
    name(
      "the caller's audio reaches the provider sample for sample; finish() gives the text and the audio's length",
    ),
    async () => {
      await withEngine({ transcripts: ["book a table"] }, async (engine, fake) => {
        const stream = await engine.open(p.language);
        const audio = pcm(250);
        speak(stream, audio);
        assertEquals(await stream.finish(), { text: "book a table", audioMs: 250 });
        assertEquals(fake.heard(), audio);
        stream.close();
      });
    },
  );

  Deno.test(name("interims are the words so far, each once, and none after finish()"), async () => {
    await withEngine(
      { transcripts: ["one two three four"], wordEveryMs: 200, finalDelayMs: 100 },
      async (engine) => {
        const stream = await engine.open(p.language);
        const interims: string[] = [];
        let finished = false, late = 0;
        stream.onInterim((text) => finished ? late++ : interims.push(text));
        speak(stream, pcm(1000));
        await waitFor(() => interims.at(-1) === "one two three four", "the last interim", 3000);
        finished = true;
        assertEquals((await stream.finish()).text, "one two three four");
        assertEquals(interims, ["one", "one two", "one two three", "one two three four"]);
        assertEquals(late, 0);
        stream.close();
      },
    );
  });

  Deno.test(name("one stream serves the call's utterances in turn"), async () => {
    const said = ["first one", "second one", "third one"];
    await withEngine({ transcripts: said }, async (engine) => {
      const stream = await engine.open(p.language);
      for (const [i, text] of said.entries()) {
        speak(stream, pcm(200 + 100 * i));
        assertEquals(await stream.finish(), { text, audioMs: 200 + 100 * i });
      }
      stream.close();
    });
  });

  Deno.test(name("an utterance without audio resolves empty and sends nothing"), async () => {
    await withEngine({ transcripts: ["never said"] }, async (engine, fake) => {
      const stream = await engine.open(p.language);
      assertEquals(await stream.finish(), { text: "", audioMs: 0 });
      assertEquals(fake.heard().length, 0);
      stream.close();
    });
  });

  Deno.test(
    name("an unserved language is refused with UnservedLanguageError, asking nothing"),
    async () => {
      await withEngine({}, async (engine, fake) => {
        assert(!engine.languages.includes(p.unservedLanguage));
        const err = await rejection(engine.open(p.unservedLanguage));
        assert(err instanceof UnservedLanguageError, String(err));
        assertEquals(fake.opened(), 0);
      });
    },
  );

  Deno.test(
    name("a wrong key is a RecognitionError with an auth fault that never shows the key"),
    async () => {
      await withEngine({ transcripts: ["secret"] }, async (engine) => {
        // Refused when the stream opens, or at the latest by its first utterance.
        const err = await rejection((async () => {
          const stream = await engine.open(p.language);
          speak(stream, pcm(200));
          await stream.finish();
        })());
        assert(err instanceof RecognitionError, String(err));
        assertEquals(err.fault, "auth");
        assert(err.message.includes(p.provider), err.message);
        assert(!err.message.includes(WRONG), err.message);
      }, WRONG);
    },
  );

  Deno.test(name("a connection dropped mid-utterance fails that utterance only"), async () => {
    await withEngine(
      { transcripts: ["dropped", "back again"], dropFirstUtteranceAfterMs: 200 },
      async (engine, fake) => {
        const stream = await engine.open(p.language);
        speak(stream, pcm(300));
        await waitFor(() => fake.dropped(), "the drop", 3000);
        speak(stream, pcm(200)); // the same utterance goes on after the drop
        const err = await rejection(stream.finish());
        assert(err instanceof RecognitionError, String(err));
        assert(!err.message.includes(KEY), err.message);
        speak(stream, pcm(300));
        assertEquals(await stream.finish(), { text: "back again", audioMs: 300 });
        stream.close();
      },
    );
  });

  Deno.test(name("closing a stream rejects its pending finish() at once"), async () => {
    await withEngine({ transcripts: ["late"], finalDelayMs: 2000 }, async (engine) => {
      const stream = await engine.open(p.language);
      speak(stream, pcm(200));
      const pending = rejection(stream.finish());
      const started = Date.now();
      stream.close();
      const err = await pending;
      assert(err instanceof RecognitionError, String(err));
      assert(Date.now() - started < 200, `rejected after ${Date.now() - started} ms`);
    });
  });

  Deno.test(name("closing the engine fails its open streams' pending finish()"), async () => {
    await withEngine({ transcripts: ["late"], finalDelayMs: 2000 }, async (engine) => {
      const stream = await engine.open(p.language);
      speak(stream, pcm(200));
      const pending = rejection(stream.finish());
      await engine.close();
      const err = await pending;
      assert(err instanceof RecognitionError, String(err));
    });
  });

  Deno.test(
    name(
      "the probe: accepted with the key and recognising nothing; a wrong key is auth; nowhere is connection",
    ),
    async () => {
      const fake = p.fake({ apiKey: KEY, transcripts: ["not for the probe"] });
      await checkProbe(fake, (url, apiKey) => p.engine(url, { apiKey }), KEY, () => {
        assertEquals(fake.heard().length, 0, "the probe sent audio");
      });
    },
  );
}
