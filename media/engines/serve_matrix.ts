// The serve matrix of a set of engines and routes (common/capabilities.ts): per language, the
// recognition engines and, per persona, the synthesis engines that the routes would try, in order.
// Built the same way from the registry's static declarations (docs/languages.md) and from the
// engines a worker really started (its node row).
import type { EngineRef, ServeMatrix } from "../../common/capabilities.ts";
import type { SynthesisCatalog } from "../tts/engine.ts";

/** What a recognition engine declares: enough to route to it without starting it. */
export interface RecognitionDeclaration {
  name: string;
  kind: EngineRef["kind"];
  languages: readonly string[];
}

/** What a synthesis engine declares. */
export interface SynthesisDeclaration {
  name: string;
  kind: EngineRef["kind"];
  catalog: SynthesisCatalog;
  /** Catalog language → the related language whose voice speaks it. */
  related?: Readonly<Record<string, string>>;
}

/** Per leg, language (or "*" for every other language) → engine names in the order to try. */
export interface Routes {
  recognition?: Record<string, readonly string[]>;
  synthesis?: Record<string, readonly string[]>;
}

/**
 * The names to try for `language`: its own route, else the "*" route, else every engine in the
 * order declared. Names of engines that do not serve the language are left out by the caller.
 */
export function routeNames(
  declared: readonly string[],
  routes: Record<string, readonly string[]> | undefined,
  language: string,
): readonly string[] {
  return routes?.[language] ?? routes?.["*"] ?? declared;
}

/** The recognition engines to try for `language`, in order. */
export function recognitionRoute<E extends RecognitionDeclaration>(
  engines: readonly E[],
  routes: Routes,
  language: string,
): E[] {
  const names = routeNames(engines.map((e) => e.name), routes.recognition, language);
  return names.map((n) => engines.find((e) => e.name === n)).filter((e): e is E =>
    e !== undefined && e.languages.includes(language)
  );
}

/** The synthesis engines to try for `language` in `voice`, in order. */
export function synthesisRoute<E extends SynthesisDeclaration>(
  engines: readonly E[],
  routes: Routes,
  language: string,
  voice: string,
): E[] {
  const names = routeNames(engines.map((e) => e.name), routes.synthesis, language);
  return names.map((n) => engines.find((e) => e.name === n)).filter((e): e is E =>
    e !== undefined && Object.hasOwn(e.catalog, language) &&
    Object.hasOwn(e.catalog[language], voice)
  );
}

const ref = (e: { name: string; kind: EngineRef["kind"] }): EngineRef => ({
  engine: e.name,
  kind: e.kind,
});

export function serveMatrix(
  recognition: readonly RecognitionDeclaration[],
  synthesis: readonly SynthesisDeclaration[],
  routes: Routes,
): ServeMatrix {
  const m: ServeMatrix = {};
  const languages = new Set([
    ...recognition.flatMap((e) => e.languages),
    ...synthesis.flatMap((e) => Object.keys(e.catalog)),
  ]);
  for (const language of languages) {
    const stt = recognitionRoute(recognition, routes, language).map(ref);
    const voices = new Set(synthesis.flatMap((e) => Object.keys(e.catalog[language] ?? {})));
    const tts: Record<string, EngineRef[]> = {};
    for (const voice of voices) {
      const engines = synthesisRoute(synthesis, routes, language, voice).map((e) => {
        const via = e.related?.[language];
        return via ? { ...ref(e), via } : ref(e);
      });
      if (engines.length) tts[voice] = engines;
    }
    const served: ServeMatrix[string] = {};
    if (stt.length) served.stt = stt;
    if (Object.keys(tts).length) served.tts = tts;
    if (served.stt || served.tts) m[language] = served;
  }
  return m;
}
