// Sarvam's two engines as the registry knows them: Saaras recognition and Bulbul synthesis, one
// key (SARVAM_API_KEY) for both, an endpoint each.
import type { EngineType } from "../base/declaration.ts";
import { engineOptions } from "../base/declaration.ts";
import { SARVAM_STT_LANGUAGES } from "./languages.ts";
import { type SarvamOptions, SarvamRecognitionEngine } from "./stt.ts";
import { SARVAM_TTS_CATALOG, SarvamSynthesisEngine, type SarvamSynthesisOptions } from "./tts.ts";

const KEY = { name: "SARVAM_API_KEY", option: "apiKey", secret: true, required: true } as const;

export const SARVAM_ENGINES: Readonly<Record<string, EngineType>> = {
  "sarvam-saaras": {
    leg: "recognition",
    kind: "provider",
    languages: SARVAM_STT_LANGUAGES,
    env: [KEY, { name: "SARVAM_STT_URL", option: "url", secret: false, required: false }],
    create(s) {
      const options = engineOptions(SARVAM_ENGINES["sarvam-saaras"], s) as unknown as SarvamOptions;
      return Promise.resolve(new SarvamRecognitionEngine(options));
    },
  },
  "sarvam-bulbul": {
    leg: "synthesis",
    kind: "provider",
    catalog: SARVAM_TTS_CATALOG,
    env: [KEY, { name: "SARVAM_TTS_URL", option: "url", secret: false, required: false }],
    create(s) {
      const type = SARVAM_ENGINES["sarvam-bulbul"];
      const options = engineOptions(type, s) as unknown as SarvamSynthesisOptions;
      return Promise.resolve(new SarvamSynthesisEngine(options));
    },
  },
};
