// Indic Parler synthesis against what every synthesis provider must do (tests/conformance/), on
// the fake of the OpenAI-compatible speech server it is reached through.
import { synthesisConformance } from "../../../tests/conformance/tts.ts";
import { startFakeIndicParler } from "../../../tests/fakes/indic_parler.ts";
import { fakeSpeech } from "../../../tests/fakes/sarvam_tts.ts";
import { IndicParlerEngine } from "./tts.ts";

synthesisConformance({
  provider: "Indic Parler",
  fake(behaviour) {
    const fake = startFakeIndicParler(behaviour);
    return {
      url: fake.url,
      opened: () => fake.received.length,
      // The WAV header is the first piece: only the ones after it are audio.
      sent: (i) => Math.max(0, fake.received[i].chunks - 1),
      released: (i) => fake.received[i]?.aborted === true,
      close: () => fake.close(),
    };
  },
  engine: (url, options) => new IndicParlerEngine({ url, ...options }),
  fakeAudio: (text, msPerChar) => ({ pcm: fakeSpeech(text, 44100, msPerChar), rate: 44100 }),
  unit: {
    text: "नमस्ते, आज मौसम बहुत अच्छा है। कल बारिश होगी।",
    voice: "VOICE_ANANYA",
    language: "LANGUAGE_HI",
  },
  unservedLanguage: "LANGUAGE_UR",
});
