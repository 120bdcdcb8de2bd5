// Sarvam's Bulbul synthesis against what every synthesis provider must do (tests/conformance/),
// on the fake of its documented streaming socket.
import { synthesisConformance } from "../../../tests/conformance/tts.ts";
import { fakeSpeech, startFakeSarvamTts } from "../../../tests/fakes/sarvam_tts.ts";
import { SarvamSynthesisEngine } from "./tts.ts";

synthesisConformance({
  provider: "Sarvam",
  fake(behaviour) {
    const fake = startFakeSarvamTts(behaviour);
    return {
      url: fake.url,
      opened: () => fake.received.length,
      sent: (i) => fake.received[i].audioFrames,
      released: (i) => fake.received[i]?.closed?.by === "client",
      close: () => fake.close(),
    };
  },
  engine: (url, options) => new SarvamSynthesisEngine({ url, ...options }),
  // The engine asks for Bulbul's default 24 kHz.
  fakeAudio: (text, msPerChar) => ({ pcm: fakeSpeech(text, 24000, msPerChar), rate: 24000 }),
  unit: {
    text: "नमस्ते, आज मौसम बहुत अच्छा है। कल बारिश होगी।",
    voice: "VOICE_ANANYA",
    language: "LANGUAGE_HI",
  },
  unservedLanguage: "LANGUAGE_SAT",
});
