// The Sarvam adapter against a fake that speaks the documented streaming protocol
// (https://docs.sarvam.ai/api-reference-docs/text-to-speech/stream): what goes on the wire and
// Bulbul's speakers. What every provider owes (48 kHz audio, word timings, refusals, cancellation)
// is tests/conformance/tts.ts, run by bulbul_passes_the_synthesis_conformance_suite.test.ts.
import assert from "node:assert/strict";
import { startFakeSarvamTts } from "../../../tests/fakes/sarvam_tts.ts";
import { SarvamSynthesisEngine } from "./tts.ts";
import { wordSpans } from "../../tts/word_timing.ts";
import { collect, waitFor } from "../../../tests/helpers/streams.ts";

const HINDI = "नमस्ते, आज मौसम बहुत अच्छा है।";

Deno.test("a unit is one socket: the documented URL, key header, config, text and flush", async () => {
  const fake = startFakeSarvamTts({ apiKey: "test-key" });
  const engine = new SarvamSynthesisEngine({ apiKey: "test-key", url: fake.url });
  try {
    await collect(engine.synthesize(HINDI, { voice: "VOICE_ANANYA", language: "LANGUAGE_HI" }));
    assert.equal(fake.received.length, 1);
    const conn = fake.received[0];
    assert.equal(conn.path, "/text-to-speech/ws");
    assert.deepEqual(conn.query, { model: "bulbul:v3", send_completion_event: "true" });
    assert.equal(conn.headers["api-subscription-key"], "test-key");
    assert.deepEqual(conn.messages, [
      {
        type: "config",
        data: {
          target_language_code: "hi-IN",
          speaker: "ritu",
          model: "bulbul:v3",
          speech_sample_rate: "24000",
          output_audio_codec: "linear16",
        },
      },
      { type: "text", data: { text: HINDI } },
      { type: "flush" },
    ]);
    // The unit is over: the adapter closes the socket itself, normally.
    await waitFor(() => conn.closed !== null, "the socket to close");
    assert.deepEqual(conn.closed, { by: "client", code: 1000 });
  } finally {
    await engine.close();
    await fake.close();
  }
});

Deno.test("a female speaker for Ananya and a male one for Arjun, in every Bulbul language", async () => {
  const fake = startFakeSarvamTts({ msPerChar: 10 });
  const engine = new SarvamSynthesisEngine({ apiKey: "test-key", url: fake.url });
  try {
    assert.deepEqual(
      [...engine.languages].sort(),
      [
        "LANGUAGE_BN",
        "LANGUAGE_EN",
        "LANGUAGE_GU",
        "LANGUAGE_HI",
        "LANGUAGE_KN",
        "LANGUAGE_ML",
        "LANGUAGE_MR",
        "LANGUAGE_OR",
        "LANGUAGE_PA",
        "LANGUAGE_TA",
        "LANGUAGE_TE",
      ],
    );
    assert.deepEqual(engine.voices, ["VOICE_ANANYA", "VOICE_ARJUN"]);
    for (const [voice, speaker] of [["VOICE_ANANYA", "ritu"], ["VOICE_ARJUN", "shubh"]]) {
      await collect(engine.synthesize("ନମସ୍କାର", { voice, language: "LANGUAGE_OR" }));
      const config = fake.received.at(-1)!.messages[0] as { data: Record<string, unknown> };
      assert.equal(config.data.speaker, speaker);
      assert.equal(config.data.target_language_code, "od-IN"); // Odia is od-IN for Bulbul
    }
  } finally {
    await engine.close();
    await fake.close();
  }
});

Deno.test("speakers follow the model, and can be overridden per language", () => {
  const v2 = new SarvamSynthesisEngine({ apiKey: "k", model: "bulbul:v2" });
  assert.equal(v2.catalog.LANGUAGE_TA.VOICE_ANANYA, "anushka");
  assert.equal(v2.catalog.LANGUAGE_TA.VOICE_ARJUN, "abhilash");
  const custom = new SarvamSynthesisEngine({
    apiKey: "k",
    speakers: { LANGUAGE_HI: { VOICE_ANANYA: "priya" } },
  });
  assert.equal(custom.catalog.LANGUAGE_HI.VOICE_ANANYA, "priya");
  assert.equal(custom.catalog.LANGUAGE_BN.VOICE_ANANYA, "ritu");
  assert.throws(
    () =>
      new SarvamSynthesisEngine({ apiKey: "k", speakers: { LANGUAGE_SAT: { VOICE_ARJUN: "x" } } }),
    RangeError,
  );
  assert.throws(() => new SarvamSynthesisEngine({ apiKey: "k", sampleRate: 44100 }), RangeError);
});

Deno.test("a unit longer than a text message goes as several, cut at sentence ends", async () => {
  const fake = startFakeSarvamTts({ msPerChar: 2, chunkMs: 1000 });
  const engine = new SarvamSynthesisEngine({ apiKey: "test-key", url: fake.url });
  try {
    const sentence = "आज मौसम बहुत अच्छा है और हम सब बाहर घूमने जा रहे हैं। ";
    const text = sentence.repeat(Math.ceil(6000 / sentence.length)).trim();
    const { chunks } = await collect(
      engine.synthesize(text, { voice: "VOICE_ANANYA", language: "LANGUAGE_HI" }),
    );
    const messages = fake.received[0].messages as { type: string; data?: { text: string } }[];
    const texts = messages.filter((m) => m.type === "text").map((m) => m.data!.text);
    assert.ok(texts.length >= 3, `${texts.length} text messages`);
    for (const t of texts) {
      assert.ok(t.length <= 2500, `a text message of ${t.length} characters`);
      assert.ok(t.trimEnd().endsWith("।"), "a message not cut at a sentence end");
    }
    assert.equal(texts.join(""), text);
    assert.deepEqual(messages.map((m) => m.type).filter((t) => t === "flush"), ["flush"]);
    const words = chunks.at(-1)!.words;
    assert.equal(words.length, wordSpans(text).length);
    for (const w of words) assert.equal(text.slice(w.charStart, w.charEnd), w.text);
  } finally {
    await engine.close();
    await fake.close();
  }
});

Deno.test("an http base URL is the same endpoint over ws", async () => {
  const fake = startFakeSarvamTts({ msPerChar: 10 });
  const url = fake.url.replace(/^ws:/, "http:") + "/";
  const engine = new SarvamSynthesisEngine({ apiKey: "test-key", url });
  try {
    const { ms } = await collect(
      engine.synthesize("Hello there.", { voice: "VOICE_ARJUN", language: "LANGUAGE_EN" }),
    );
    assert.ok(ms > 0);
    assert.equal(fake.received[0].path, "/text-to-speech/ws");
  } finally {
    await engine.close();
    await fake.close();
  }
});
