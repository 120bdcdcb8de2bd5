// A whole call in Hindi through the provider adapters, each provider a FAKE on loopback that
// speaks its documented protocol (tests/fakes/): the caller's audio goes to fake Sarvam
// recognition, the brain gets a Devanagari UserTurn and answers in Hindi, fake Sarvam synthesis
// makes the audio the caller hears; a barge-in gives a Heard prefix that ends at a Devanagari
// word boundary, marked as estimated (Bulbul gives no word timings). The record and usage name
// the engine of each leg.
import { assert, assertEquals } from "./helpers/assert.ts";
import {
  assertTurnLatenciesAddUp,
  botAudioAfter,
  heardCutOffAtWord,
  speech,
  startCallService,
  waitForLog,
} from "./helpers/call_harness.ts";
import { createBrain } from "../sdk/brain/mod.ts";
import { startFakeSarvamStt } from "./fakes/sarvam_stt.ts";
import { startFakeSarvamTts } from "./fakes/sarvam_tts.ts";

const ASKED = "नमस्ते, मुझे अपने ऑर्डर के बारे में मदद चाहिए";
const REPLY = "जी ज़रूर, मैं आपकी मदद करूँगी। आपका ऑर्डर कल शाम तक पहुँच जाएगा, और उसके साथ " +
  "एक छोटा सा उपहार भी होगा। क्या आप कुछ और जानना चाहेंगे?";

Deno.test("a call in Hindi through the provider fakes: Devanagari turns, Hindi speech, heard at a word boundary", async () => {
  const stt = startFakeSarvamStt({ apiKey: "test-key", transcripts: [ASKED, "रुकिए"] });
  // 60 ms of audio per character: the reply lasts several seconds, long enough to barge in.
  const tts = startFakeSarvamTts({ apiKey: "test-key", msPerChar: 60 });
  const turns: string[] = [];
  const brain = createBrain({
    onSessionStart: () => "नमस्ते!",
    async *onTurn(turn) {
      turns.push(turn.text);
      if (turns.length === 1) yield REPLY;
    },
  });
  const service = await startCallService(brain, {
    workerEnv: {
      SARVAM_API_KEY: "test-key",
      SPEECH_ENGINES: JSON.stringify({
        options: {
          "sarvam-saaras": { url: stt.url },
          "sarvam-bulbul": { url: tts.url },
        },
      }),
    },
  });
  try {
    const { caller, sessionId } = await service.call({
      config: {
        tts: { voice: "VOICE_ANANYA", language: "LANGUAGE_HI" },
        stt: { language: "LANGUAGE_HI" },
      },
    });
    await caller.waitForMessage((m) => m.type === "bot-stopped-speaking", 15_000);

    // The caller speaks; the fake recogniser hears the scripted Hindi.
    const asked = await caller.say(await speech("hello, I need help with my order"));
    const userTurn = await waitForLog(
      service,
      sessionId,
      (e) => e.source === "to_brain" && e.kind === "user_turn",
    );
    assertEquals(userTurn.data.text, ASKED);
    // The reply is audible at the caller.
    await caller.waitForMessage((m) => m.type === "bot-started-speaking", 10_000);
    await new Promise((r) => setTimeout(r, 1500));
    assert(botAudioAfter(caller, asked.startedAt) !== undefined, "the caller never heard the bot");

    // Barge-in over the Hindi reply.
    await caller.say(await speech("wait, stop"));
    // It ends where a word ends: the next character is a space or punctuation, never a matra.
    const text = await heardCutOffAtWord(service, sessionId, REPLY, /^[\s,।?!]/);
    await waitForLog(service, sessionId, (e) => e.source === "to_brain" && e.kind === "cancel");

    await caller.hangUp();
    const record = await service.record(sessionId, "ended");
    assertEquals(turns[0], ASKED);
    const t1 = record.timings.turns.find((t: { turn_id: string }) => t.turn_id === "t1");
    assertEquals(t1.engines, { recognition: "sarvam-saaras", synthesis: ["sarvam-bulbul"] });
    // Provider engines: no step is negative and the steps add up to the end-to-end figure.
    assertTurnLatenciesAddUp(t1);
    const cut = t1.units.find((u: { cut_off: boolean }) => u.cut_off);
    assertEquals([cut.engine, cut.heard, cut.heard_estimated], ["sarvam-bulbul", text, true]);
    const usage = record.usage.by_engine;
    assert(usage["sarvam-saaras"].recognised_seconds > 0.5, JSON.stringify(usage));
    assert(usage["sarvam-bulbul"].synthesized_characters >= REPLY.length, JSON.stringify(usage));
    assertEquals(usage.pocketsphinx, undefined);

    // What the providers were sent: Hindi, in the documented places.
    // (The worker's start-up probe opened a session of its own, with no audio.)
    const calls = stt.received.connections.filter((c) => c.audioBytes > 0);
    assert(calls.length > 0, "no audio reached the recogniser");
    assertEquals(calls.map((c) => c.query.language_code), calls.map(() => "hi-IN"));
    assertEquals(stt.violations, []);
    const config = tts.received.flatMap((c) => c.messages).find((m) =>
      (m as { type?: string }).type === "config"
    ) as { data: { target_language_code: string } };
    assertEquals(config.data.target_language_code, "hi-IN");
  } finally {
    await service.close();
    await stt.close();
    await tts.close();
  }
});
