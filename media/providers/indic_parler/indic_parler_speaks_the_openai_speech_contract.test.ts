// The Indic Parler adapter against a fake OpenAI-compatible speech server
// (https://platform.openai.com/docs/api-reference/audio/createSpeech, as parler-tts-server
// exposes it): the request it makes, the speaker captions from the model card's table
// (https://huggingface.co/ai4bharat/indic-parler-tts) and long units split into requests. What
// every provider owes (48 kHz audio, word timings, refusals, cancellation) is
// tests/conformance/tts.ts, run by indic_parler_passes_the_synthesis_conformance_suite.test.ts.
import assert from "node:assert/strict";
import { startFakeIndicParler } from "../../../tests/fakes/indic_parler.ts";
import { fakeSpeech } from "../../../tests/fakes/sarvam_tts.ts";
import { UnservedError } from "../../tts/engine.ts";
import { DEFAULT_PARLER_DESCRIPTION, IndicParlerEngine } from "./tts.ts";
import { wordSpans } from "../../tts/word_timing.ts";
import { collect } from "../../../tests/helpers/streams.ts";

const HINDI = "नमस्ते, आज मौसम बहुत अच्छा है।";

const caption = (speaker: string) => DEFAULT_PARLER_DESCRIPTION.replaceAll("{speaker}", speaker);

Deno.test("a unit is one POST /v1/audio/speech: model, input, caption as voice, wav", async () => {
  const fake = startFakeIndicParler({ apiKey: "test-key" });
  const engine = new IndicParlerEngine({ url: fake.url, apiKey: "test-key" });
  try {
    await collect(engine.synthesize(HINDI, { voice: "VOICE_ANANYA", language: "LANGUAGE_HI" }));
    assert.equal(fake.received.length, 1);
    const req = fake.received[0];
    assert.equal(req.method, "POST");
    assert.equal(req.path, "/v1/audio/speech");
    assert.equal(req.headers.authorization, "Bearer test-key");
    assert.equal(req.headers["content-type"], "application/json");
    assert.equal(req.headers.accept, "audio/wav");
    assert.deepEqual(req.body, {
      model: "ai4bharat/indic-parler-tts",
      input: HINDI,
      voice: caption("Divya"),
      response_format: "wav",
    });
    assert.ok((req.body as { voice: string }).voice.startsWith("Divya speaks"));
    assert.equal(req.completed, true);
  } finally {
    await engine.close();
    await fake.close();
  }
});

Deno.test("the rate is the WAV header's, whatever the server makes", async () => {
  const fake = startFakeIndicParler({ sampleRate: 24000, msPerChar: 50 });
  const engine = new IndicParlerEngine({ url: fake.url, apiKey: "test-key" });
  try {
    const { ms } = await collect(
      engine.synthesize("Hello there, friend.", { voice: "VOICE_ANANYA", language: "LANGUAGE_EN" }),
    );
    assert.ok(Math.abs(ms - 20 * 50) < 3, `${ms} ms`);
  } finally {
    await engine.close();
    await fake.close();
  }
});

Deno.test("the card's speakers: a woman for Ananya, a man for Arjun, where it names one", async () => {
  const fake = startFakeIndicParler({ msPerChar: 10 });
  const engine = new IndicParlerEngine({ url: fake.url, apiKey: "test-key" });
  try {
    const cases: [string, string, string, string][] = [
      ["LANGUAGE_HI", "VOICE_ANANYA", "Divya", "नमस्ते"],
      ["LANGUAGE_HI", "VOICE_ARJUN", "Rohit", "नमस्ते"],
      ["LANGUAGE_BN", "VOICE_ANANYA", "Aditi", "নমস্কার"],
      ["LANGUAGE_BN", "VOICE_ARJUN", "Arjun", "নমস্কার"],
      ["LANGUAGE_EN", "VOICE_ANANYA", "Mary", "Hello"],
      ["LANGUAGE_EN", "VOICE_ARJUN", "Thoma", "Hello"],
      ["LANGUAGE_TA", "VOICE_ANANYA", "Jaya", "வணக்கம்"],
    ];
    for (const [language, voice, speaker, text] of cases) {
      await collect(engine.synthesize(text, { voice, language }));
      assert.equal((fake.received.at(-1)!.body as { voice: string }).voice, caption(speaker));
    }
    // Tamil's named speakers are both women; Urdu has none: not served rather than a random voice.
    assert.throws(
      () => engine.synthesize("வணக்கம்", { voice: "VOICE_ARJUN", language: "LANGUAGE_TA" }),
      UnservedError,
    );
    assert.throws(
      () => engine.synthesize("سلام", { voice: "VOICE_ANANYA", language: "LANGUAGE_UR" }),
      UnservedError,
    );
    assert.ok(!engine.languages.includes("LANGUAGE_PA"), "Punjabi is not officially supported");
    assert.equal(engine.languages.length, 16);
  } finally {
    await engine.close();
    await fake.close();
  }
});

Deno.test("speaker overrides add or change a persona's speaker", async () => {
  const fake = startFakeIndicParler({ msPerChar: 10 });
  const engine = new IndicParlerEngine({
    url: fake.url,
    apiKey: "test-key",
    speakers: { LANGUAGE_PA: { VOICE_ARJUN: "Divjot" }, LANGUAGE_HI: { VOICE_ANANYA: "Rani" } },
  });
  try {
    await collect(
      engine.synthesize("ਸਤ ਸ੍ਰੀ ਅਕਾਲ", { voice: "VOICE_ARJUN", language: "LANGUAGE_PA" }),
    );
    assert.equal((fake.received[0].body as { voice: string }).voice, caption("Divjot"));
    assert.equal(engine.catalog.LANGUAGE_HI.VOICE_ANANYA, "Rani");
    assert.throws(
      () =>
        new IndicParlerEngine({ url: fake.url, speakers: { LANGUAGE_KS: { VOICE_ARJUN: "x" } } }),
      RangeError,
    );
  } finally {
    await engine.close();
    await fake.close();
  }
});

Deno.test("with no key configured, no Authorization header is sent", async () => {
  const fake = startFakeIndicParler({ apiKey: null, msPerChar: 10 });
  const engine = new IndicParlerEngine({ url: fake.url + "/" });
  try {
    await collect(engine.synthesize("नमस्ते", { voice: "VOICE_ARJUN", language: "LANGUAGE_HI" }));
    assert.equal(fake.received[0].headers.authorization, undefined);
    assert.equal(fake.received[0].path, "/v1/audio/speech");
  } finally {
    await engine.close();
    await fake.close();
  }
});

Deno.test("a long unit is several requests cut at sentence ends, timed end to end", async () => {
  const fake = startFakeIndicParler({ msPerChar: 20, chunkMs: 1000 });
  const engine = new IndicParlerEngine({
    url: fake.url,
    apiKey: "test-key",
    maxCharsPerRequest: 80,
  });
  try {
    const text = "आज मौसम बहुत अच्छा है। हम सब बाहर घूमने जा रहे हैं। " +
      "शाम को बारिश हो सकती है, इसलिए छाता साथ रखना। कल फिर मिलेंगे।";
    const { ms, words } = await collect(
      engine.synthesize(text, { voice: "VOICE_ANANYA", language: "LANGUAGE_HI" }),
    );
    const inputs = fake.received.map((r) => (r.body as { input: string }).input);
    assert.ok(inputs.length >= 2, `${inputs.length} requests`);
    assert.equal(inputs.join(""), text);
    for (const input of inputs) {
      assert.ok(input.length <= 80, `a request of ${input.length} characters`);
      assert.ok(input.trimEnd().endsWith("।"), "a request not cut at a sentence end");
    }
    // Every word once, in order, on the unit's own offsets, over the whole unit's audio.
    assert.deepEqual(
      words.map((w) => [w.charStart, w.charEnd]),
      wordSpans(text).map((s) => [s.start, s.end]),
    );
    for (let i = 1; i < words.length; i++) assert.ok(words[i].startMs >= words[i - 1].endMs);
    assert.equal(words.at(-1)!.endMs, ms);
    const firstPartMs = fakeSpeech(inputs[0], 44100, 20).length / 44.1;
    const second = words.find((w) => w.charStart >= inputs[0].length)!;
    assert.ok(Math.abs(second.startMs - firstPartMs) < 3, "the second part's words start late");
  } finally {
    await engine.close();
    await fake.close();
  }
});
