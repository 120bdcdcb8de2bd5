// Every speech engine this service can run, by registry name: what it serves (declared
// statically, so routes, capabilities and docs/languages.md need nothing started) and how to
// start it. Adding a provider is a module beside its siblings in stt/ or tts/ plus one line here.
import type { EngineRef } from "../../common/capabilities.ts";
import type { RecognitionEngine } from "../stt/engine.ts";
import type { SynthesisCatalog, SynthesisEngine } from "../tts/engine.ts";
import {
  POCKETSPHINX_LANGUAGES,
  PocketsphinxEngine,
  type PocketsphinxOptions,
} from "../stt/pocketsphinx.ts";
import { ESPEAK_CATALOG, ESPEAK_RELATED, EspeakEngine } from "../tts/espeak_engine.ts";
import { SARVAM_STT_LANGUAGES, SarvamRecognitionEngine } from "../stt/sarvam.ts";
import { SARVAM_TTS_CATALOG, SarvamSynthesisEngine } from "../tts/sarvam.ts";
import { INDIC_PARLER_CATALOG, IndicParlerEngine } from "../tts/indic_parler.ts";
import { lexiconWords } from "../turn/lexicon.ts";

/** What an engine is started with: its options from the speech config, secrets from the env. */
export interface EngineStart {
  options: Record<string, unknown>;
  env: (name: string) => string | undefined;
}

/** A provider's options: the speech config's, over the key and URL the environment gives. */
function providerOptions(start: EngineStart, keyVar: string, urlVar: string) {
  const url = start.env(urlVar), apiKey = start.env(keyVar);
  return { ...(apiKey ? { apiKey } : {}), ...(url ? { url } : {}), ...start.options };
}

/**
 * The speech config's options (threads, decoder args, vocabulary; a multi-runner node sets
 * threads) over the turn lexicon's words, which the decoders know whatever the vocabulary ("mhm").
 */
export function pocketsphinxOptions(start: EngineStart): PocketsphinxOptions {
  return { keepWords: lexiconWords("en"), ...start.options as PocketsphinxOptions };
}

export interface RecognitionEngineType {
  leg: "recognition";
  kind: EngineRef["kind"];
  languages: readonly string[];
  /** Environment variables it cannot start without (a provider's key). */
  needs?: readonly string[];
  create(start: EngineStart): Promise<RecognitionEngine>;
}

export interface SynthesisEngineType {
  leg: "synthesis";
  kind: EngineRef["kind"];
  catalog: SynthesisCatalog;
  /** Catalog language → the related language whose voice speaks it (not a voice of its own). */
  related?: Readonly<Record<string, string>>;
  needs?: readonly string[];
  create(start: EngineStart): Promise<SynthesisEngine>;
}

export type EngineType = RecognitionEngineType | SynthesisEngineType;

export const ENGINE_TYPES: Readonly<Record<string, EngineType>> = {
  "pocketsphinx": {
    leg: "recognition",
    kind: "local",
    languages: POCKETSPHINX_LANGUAGES,
    create: (s) => PocketsphinxEngine.create(pocketsphinxOptions(s)),
  },
  "espeak-ng": {
    leg: "synthesis",
    kind: "local",
    catalog: ESPEAK_CATALOG,
    related: ESPEAK_RELATED,
    async create() {
      const engine = new EspeakEngine();
      await engine.ready;
      return engine;
    },
  },
  "sarvam-saaras": {
    leg: "recognition",
    kind: "provider",
    languages: SARVAM_STT_LANGUAGES,
    needs: ["SARVAM_API_KEY"],
    create: (s) =>
      Promise.resolve(
        new SarvamRecognitionEngine(
          providerOptions(s, "SARVAM_API_KEY", "SARVAM_STT_URL") as { apiKey: string },
        ),
      ),
  },
  "sarvam-bulbul": {
    leg: "synthesis",
    kind: "provider",
    catalog: SARVAM_TTS_CATALOG,
    needs: ["SARVAM_API_KEY"],
    create: (s) =>
      Promise.resolve(
        new SarvamSynthesisEngine(
          providerOptions(s, "SARVAM_API_KEY", "SARVAM_TTS_URL") as { apiKey: string },
        ),
      ),
  },
  "indic-parler": {
    leg: "synthesis",
    kind: "provider",
    catalog: INDIC_PARLER_CATALOG,
    create(s) {
      const options = providerOptions(s, "INDIC_PARLER_API_KEY", "INDIC_PARLER_URL");
      if (typeof options.url !== "string") {
        return Promise.reject(new Error("indic-parler needs INDIC_PARLER_URL (or options.url)"));
      }
      return Promise.resolve(new IndicParlerEngine(options as { url: string }));
    },
  },
};
