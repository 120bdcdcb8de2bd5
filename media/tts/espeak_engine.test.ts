import assert from "node:assert/strict";
import { LOCAL_ENGINES } from "../../common/capabilities.ts";
import { SynthesisError, UnservedError, type WordTiming } from "./engine.ts";
import { ESPEAK_LANGUAGES, EspeakEngine } from "./espeak_engine.ts";
import { wordSpans } from "./word_timing.ts";
import { collect } from "../../tests/helpers/streams.ts";

/** A sample sentence per language with a voice of its own, in its own script. */
const SAMPLES: Record<string, string> = {
  LANGUAGE_EN: "Hello, how can I help you today?",
  LANGUAGE_AS: "নমস্কাৰ, মই আপোনাক কেনেকৈ সহায় কৰিব পাৰোঁ?",
  LANGUAGE_BN: "নমস্কার, আমি আপনাকে কীভাবে সাহায্য করতে পারি?",
  LANGUAGE_GU: "નમસ્તે, હું તમારી કેવી રીતે મદદ કરી શકું?",
  LANGUAGE_HI: "नमस्ते, मैं आज आपकी कैसे मदद कर सकता हूँ?",
  LANGUAGE_KN: "ನಮಸ್ಕಾರ, ನಾನು ನಿಮಗೆ ಹೇಗೆ ಸಹಾಯ ಮಾಡಬಹುದು?",
  LANGUAGE_KOK: "नमस्कार, हांव तुमकां कशी मदत करूं?",
  LANGUAGE_ML: "നമസ്കാരം, ഞാൻ നിങ്ങളെ എങ്ങനെ സഹായിക്കും?",
  LANGUAGE_MR: "नमस्कार, मी तुम्हाला कशी मदत करू शकतो?",
  LANGUAGE_NE: "नमस्ते, म तपाईंलाई कसरी मद्दत गर्न सक्छु?",
  LANGUAGE_OR: "ନମସ୍କାର, ମୁଁ ଆପଣଙ୍କୁ କିପରି ସାହାଯ୍ୟ କରିପାରିବି?",
  LANGUAGE_PA: "ਸਤ ਸ੍ਰੀ ਅਕਾਲ, ਮੈਂ ਤੁਹਾਡੀ ਕਿਵੇਂ ਮਦਦ ਕਰ ਸਕਦਾ ਹਾਂ?",
  LANGUAGE_SD: "سلام، مان توهان جي ڪيئن مدد ڪري سگهان ٿو؟",
  LANGUAGE_TA: "வணக்கம், நான் உங்களுக்கு எப்படி உதவ முடியும்?",
  LANGUAGE_TE: "నమస్కారం, నేను మీకు ఎలా సహాయం చేయగలను?",
  LANGUAGE_UR: "السلام علیکم، میں آپ کی کیسے مدد کر سکتا ہوں؟",
};

const LONG = "Thank you for calling. Your order was shipped this morning and should arrive " +
  "within three business days. If anything is missing, call us back and we will sort it out.";

/** Checks the timings of one unit against its text and its audio length. */
function assertTimings(text: string, words: WordTiming[], audioMs: number) {
  assert.ok(words.length > 0, "no words");
  // Every written word is reported, in order, and its offsets slice the text to it. A token of
  // punctuation alone may be silent ("—"), or spoken ("&").
  const spans = wordSpans(text).map((s) => [s.start, s.end]);
  const reported = words.map((w) => [w.charStart, w.charEnd]);
  const spoken = (s: number[]) => /[\p{L}\p{N}]/u.test(text.slice(s[0], s[1]));
  assert.deepEqual(
    reported.filter(spoken),
    spans.filter(spoken),
  );
  assert.deepEqual(spans.filter((s) => reported.some((r) => r[0] === s[0])), reported);
  for (const w of words) assert.equal(text.slice(w.charStart, w.charEnd), w.text);
  for (let i = 0; i < words.length; i++) {
    const w = words[i];
    assert.ok(w.startMs <= w.endMs, `${w.text}: ${w.startMs} > ${w.endMs}`);
    if (i > 0) assert.ok(words[i - 1].endMs <= w.startMs, `${w.text} overlaps the word before`);
  }
  // Speech starts at once (an opening quote costs espeak a ~100 ms pause).
  assert.ok(words[0].startMs >= 0 && words[0].startMs < 300, `first word at ${words[0].startMs}`);
  assert.ok(words.at(-1)!.endMs <= audioMs + 1, `last word ends after the audio (${audioMs} ms)`);
}

/** Median fundamental frequency over the loud frames (normalised autocorrelation). */
function medianF0(x: Int16Array, rate: number): number {
  const frame = Math.round(rate * 0.04), hop = Math.round(rate * 0.02);
  const minLag = Math.floor(rate / 400), maxLag = Math.ceil(rate / 70);
  const peak = x.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
  const f0s: number[] = [];
  for (let s = 0; s + frame + maxLag < x.length; s += hop) {
    let energy = 0;
    for (let i = s; i < s + frame; i++) energy += x[i] * x[i];
    if (Math.sqrt(energy / frame) < peak * 0.1) continue;
    let best = 0, bestLag = 0;
    for (let lag = minLag; lag <= maxLag; lag += 1) {
      let c = 0, e = 0;
      for (let i = s; i < s + frame; i++) {
        c += x[i] * x[i + lag];
        e += x[i + lag] * x[i + lag];
      }
      const r = c / Math.sqrt(energy * e + 1);
      if (r > best) [best, bestLag] = [r, lag];
    }
    if (best > 0.7) f0s.push(rate / bestLag);
  }
  f0s.sort((a, b) => a - b);
  return f0s[f0s.length >> 1] ?? 0;
}

const EN = { voice: "VOICE_ANANYA", language: "LANGUAGE_EN" };

Deno.test("espeak engine, one thread shared by the steps", async (t) => {
  const engine = new EspeakEngine();
  try {
    await engine.ready;

    await t.step("serves the voices and languages the capabilities report", () => {
      assert.deepEqual([...engine.voices].sort(), [...LOCAL_ENGINES.voices].sort());
      assert.deepEqual([...engine.languages].sort(), [...LOCAL_ENGINES.tts_languages].sort());
      assert.deepEqual(Object.keys(SAMPLES).sort(), Object.keys(ESPEAK_LANGUAGES).sort());
    });

    // The others, spoken through a related language's voice: related_voices_*.test.ts.
    for (const language of Object.keys(ESPEAK_LANGUAGES)) {
      await t.step(`${language} speaks a sample sentence with word timings`, async () => {
        const text = SAMPLES[language];
        const { pcm, words, ms } = await collect(
          engine.synthesize(text, { voice: "VOICE_ANANYA", language }),
        );
        assert.ok(ms > 800, `only ${ms} ms of audio`);
        assert.ok(pcm.some((v) => Math.abs(v) > 1000), "silent");
        assertTimings(text, words, ms);
      });
    }

    await t.step(
      "a long unit comes in many chunks of 48 kHz audio with monotonic words",
      async () => {
        const { chunks, words, ms } = await collect(engine.synthesize(LONG, EN));
        assert.ok(chunks.length > 20, `${chunks.length} chunks`);
        // espeak's ~100 ms pieces (2,206 samples at 22.05 kHz) arrive as ~4,800 samples at 48 kHz.
        assert.ok(Math.abs(chunks[1].pcm.length - 4802) <= 2, `${chunks[1].pcm.length}`);
        assert.ok(ms > 8000);
        assertTimings(LONG, words, ms);
      },
    );

    await t.step(
      "punctuation and markup characters keep offsets on the original text",
      async () => {
        const text = `"Tom & Jerry" <meet> at 3.5 km — don't they?`;
        const { words, ms } = await collect(engine.synthesize(text, EN));
        assertTimings(text, words, ms);
        assert.deepEqual(words.map((w) => w.text), [
          "Tom",
          "&",
          "Jerry",
          "meet",
          "at",
          "3.5",
          "km",
          "don't",
          "they",
        ]);
      },
    );

    await t.step("aborting mid-unit ends the stream with the abort reason", async () => {
      const full = await collect(engine.synthesize(LONG, EN));
      const ac = new AbortController();
      let received = 0;
      await assert.rejects(async () => {
        for await (const c of engine.synthesize(LONG, { ...EN, signal: ac.signal })) {
          received += c.pcm.length;
          ac.abort();
        }
      }, (err: unknown) => err instanceof DOMException && err.name === "AbortError");
      assert.ok(received > 0 && received < full.pcm.length / 4, `${received} samples got through`);
      // The thread is free again: the next unit is whole.
      const after = await collect(engine.synthesize("Still here.", EN));
      assertTimings("Still here.", after.words, after.ms);
    });

    await t.step("an already aborted signal gives no audio", async () => {
      const ac = new AbortController();
      ac.abort(new Error("caller hung up"));
      await assert.rejects(
        collect(engine.synthesize(LONG, { ...EN, signal: ac.signal })),
        /caller hung up/,
      );
    });

    await t.step("a unit aborted while queued never plays; the one ahead finishes", async () => {
      const ac = new AbortController();
      const first = collect(engine.synthesize(LONG, EN));
      const second = collect(engine.synthesize(LONG, { ...EN, signal: ac.signal }));
      ac.abort();
      await assert.rejects(second, { name: "AbortError" });
      assertTimings(LONG, (await first).words, (await first).ms);
    });

    await t.step("leaving the loop early stops the unit and frees the thread", async () => {
      for await (const _ of engine.synthesize(LONG, EN)) break;
      const next = await collect(engine.synthesize("Next unit.", EN));
      assertTimings("Next unit.", next.words, next.ms);
    });

    await t.step("units started together all complete, each with its own words", async () => {
      const texts = ["First of three.", "नमस्ते दोस्त", "Third and last."];
      const langs = ["LANGUAGE_EN", "LANGUAGE_HI", "LANGUAGE_EN"];
      const results = await Promise.all(
        texts.map((text, i) =>
          collect(engine.synthesize(text, { voice: "VOICE_ARJUN", language: langs[i] }))
        ),
      );
      results.forEach((r, i) => assertTimings(texts[i], r.words, r.ms));
    });

    await t.step(
      "Ananya is a female voice and Arjun a male one, in English and Hindi",
      async () => {
        for (
          const [language, text] of [["LANGUAGE_EN", LONG], ["LANGUAGE_HI", SAMPLES.LANGUAGE_HI]]
        ) {
          const ananya = await collect(
            engine.synthesize(text, { voice: "VOICE_ANANYA", language }),
          );
          const arjun = await collect(engine.synthesize(text, { voice: "VOICE_ARJUN", language }));
          assertTimings(text, ananya.words, ananya.ms);
          assertTimings(text, arjun.words, arjun.ms);
          const f = medianF0(ananya.pcm, 48000), m = medianF0(arjun.pcm, 48000);
          assert.ok(f > 160 && m < 140, `${language}: Ananya ${f} Hz, Arjun ${m} Hz`);
        }
      },
    );

    await t.step("an unserved voice or language is refused at once, naming what is served", () => {
      assert.throws(
        () => engine.synthesize("x", { voice: "VOICE_NOBODY", language: "LANGUAGE_EN" }),
        (e: unknown) =>
          e instanceof UnservedError && e.kind === "voice" && /VOICE_ANANYA/.test(e.message),
      );
      for (const language of ["LANGUAGE_XX", "LANGUAGE_UNSPECIFIED", "toString"]) {
        assert.throws(
          () => engine.synthesize("x", { voice: "VOICE_ANANYA", language }),
          (e: unknown) =>
            e instanceof UnservedError && e.kind === "language" &&
            e.message.includes(`"${language}"`) && e.message.includes("LANGUAGE_HI"),
        );
      }
    });

    await t.step("empty text gives an empty stream", async () => {
      const { chunks } = await collect(engine.synthesize("   ", EN));
      assert.equal(chunks.reduce((s, c) => s + c.pcm.length + c.words.length, 0), 0);
    });
  } finally {
    await engine.close();
  }
});

Deno.test("closing the engine fails open streams and refuses new units", async () => {
  const engine = new EspeakEngine();
  await engine.ready;
  const open = collect(engine.synthesize(LONG, EN));
  await engine.close();
  await assert.rejects(
    open,
    (e: unknown) => e instanceof SynthesisError && /closed/.test(e.message),
  );
  assert.throws(() => engine.synthesize("x", EN), SynthesisError);
});

Deno.test("two threads serve concurrent units", async () => {
  await using engine = new EspeakEngine({ threads: 2, quality: 3 });
  await engine.ready;
  const texts = [LONG, SAMPLES.LANGUAGE_TA, SAMPLES.LANGUAGE_EN];
  const langs = ["LANGUAGE_EN", "LANGUAGE_TA", "LANGUAGE_EN"];
  const results = await Promise.all(
    texts.map((text, i) => collect(engine.synthesize(text, { ...EN, language: langs[i] }))),
  );
  results.forEach((r, i) => assertTimings(texts[i], r.words, r.ms));
});
