// Indic Parler-TTS as the registry knows it: a self-hosted server, on when its URL is given; its
// key is optional (sent as a Bearer token when set).
import { engineOptions, type EngineType } from "../base/declaration.ts";
import { INDIC_PARLER_CATALOG } from "./languages.ts";
import { IndicParlerEngine, type IndicParlerOptions } from "./tts.ts";

export const INDIC_PARLER_ENGINES: Readonly<Record<string, EngineType>> = {
  "indic-parler": {
    leg: "synthesis",
    kind: "provider",
    catalog: INDIC_PARLER_CATALOG,
    env: [
      { name: "INDIC_PARLER_URL", option: "url", secret: false, required: true },
      { name: "INDIC_PARLER_API_KEY", option: "apiKey", secret: true, required: false },
    ],
    create(s) {
      const options = engineOptions(INDIC_PARLER_ENGINES["indic-parler"], s);
      if (typeof options.url !== "string") {
        return Promise.reject(new Error("indic-parler needs INDIC_PARLER_URL (or options.url)"));
      }
      return Promise.resolve(new IndicParlerEngine(options as unknown as IndicParlerOptions));
    },
  },
};
