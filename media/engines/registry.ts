// Every speech engine this service can run, by registry name. A cloud provider declares its
// engines in its own folder (media/providers/<provider>/engines.ts: what each serves, the
// environment variables it reads, how to start it, on the provider base of media/providers/base/)
// and is one line here; the local engines, which need nothing outside this machine, are declared
// here beside them. From these declarations come the default speech config (speech_config.ts),
// docs/languages.md (cli/languages_doc.ts) and the deploy files' variable lists (a test keeps
// deploy/compose.yaml and deploy/k8s/ in step).
import type { EngineStart, EngineType } from "../providers/base/declaration.ts";
import {
  POCKETSPHINX_LANGUAGES,
  PocketsphinxEngine,
  type PocketsphinxOptions,
} from "../stt/pocketsphinx.ts";
import { ESPEAK_CATALOG, ESPEAK_RELATED, EspeakEngine } from "../tts/espeak_engine.ts";
import { lexiconWords } from "../turn/lexicon.ts";
import { SARVAM_ENGINES } from "../providers/sarvam/engines.ts";
import { INDIC_PARLER_ENGINES } from "../providers/indic_parler/engines.ts";

export type {
  EngineStart,
  EngineType,
  RecognitionEngineType,
  SynthesisEngineType,
} from "../providers/base/declaration.ts";

/**
 * The speech config's options (threads, decoder args, vocabulary; a multi-runner node sets
 * threads) over the turn lexicon's words, which the decoders know whatever the vocabulary ("mhm").
 */
export function pocketsphinxOptions(start: EngineStart): PocketsphinxOptions {
  return { keepWords: lexiconWords("en"), ...start.options as PocketsphinxOptions };
}

const LOCAL_ENGINES: Readonly<Record<string, EngineType>> = {
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
};

/** In default order within a leg: the providers first, in this order; the local engines last. */
export const ENGINE_TYPES: Readonly<Record<string, EngineType>> = {
  ...SARVAM_ENGINES,
  ...INDIC_PARLER_ENGINES,
  ...LOCAL_ENGINES,
};
