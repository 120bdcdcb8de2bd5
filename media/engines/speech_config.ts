// Which engines a worker runs and how it routes languages to them: `SPEECH_ENGINES` (inline JSON,
// or the path of a JSON file) or, without it, the local engines plus every provider whose required
// variables (its registry declaration's `env`) the environment gives. Keys are read from the
// environment only, never from the file, so a speech config can be committed and shared.
//
// {
//   "recognition": ["sarvam-saaras", "pocketsphinx"],           // engines run, default order
//   "synthesis": ["sarvam-bulbul", "indic-parler", "espeak-ng"],
//   "routes": { "recognition": { "LANGUAGE_EN": ["pocketsphinx", "sarvam-saaras"] },
//               "synthesis": { "*": ["sarvam-bulbul", "indic-parler", "espeak-ng"] } },
//   "options": { "sarvam-saaras": { "url": "wss://api.sarvam.ai" } }
// }
import {
  ENGINE_TYPES,
  type EngineType,
  type RecognitionEngineType,
  type SynthesisEngineType,
} from "./registry.ts";
import { missingVariables } from "../providers/base/declaration.ts";
import { type Routes, serveMatrix } from "./serve_matrix.ts";
import type { ServeMatrix } from "../../common/capabilities.ts";

export interface SpeechConfig {
  recognition: string[];
  synthesis: string[];
  routes: Routes;
  options: Record<string, Record<string, unknown>>;
}

/** A speech config that cannot be used; the worker refuses to start with it. */
export class SpeechConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SpeechConfigError";
  }
}

type Env = (name: string) => string | undefined;

/**
 * With nothing configured: every provider engine whose required variables the environment gives
 * (registry order), first; the local engines, which need none, last.
 */
export function defaultSpeechConfig(env: Env): SpeechConfig {
  const runnable = Object.entries(ENGINE_TYPES)
    .filter(([, type]) => missingVariables(type, env).length === 0)
    .sort(([, a], [, b]) => Number(a.kind === "local") - Number(b.kind === "local"));
  const leg = (l: EngineType["leg"]) => runnable.filter(([, t]) => t.leg === l).map(([n]) => n);
  return { recognition: leg("recognition"), synthesis: leg("synthesis"), routes: {}, options: {} };
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

function names(v: unknown, path: string, leg: "recognition" | "synthesis"): string[] {
  if (!Array.isArray(v) || v.some((n) => typeof n !== "string")) {
    throw new SpeechConfigError(`${path} must be a list of engine names`);
  }
  for (const n of v as string[]) {
    const type = ENGINE_TYPES[n];
    if (!type) {
      throw new SpeechConfigError(
        `${path}: unknown engine "${n}"; known: ${Object.keys(ENGINE_TYPES).join(", ")}`,
      );
    }
    if (type.leg !== leg) throw new SpeechConfigError(`${path}: "${n}" is a ${type.leg} engine`);
  }
  return v as string[];
}

/** Reads and checks a speech config; every engine it names must exist and serve its leg. */
export function parseSpeechConfig(json: unknown, env: Env): SpeechConfig {
  if (!isObject(json)) throw new SpeechConfigError("the speech config must be a JSON object");
  const known = new Set(["recognition", "synthesis", "routes", "options"]);
  for (const k of Object.keys(json)) {
    if (!known.has(k)) throw new SpeechConfigError(`unknown field "${k}"`);
  }
  const base = defaultSpeechConfig(env);
  const recognition = json.recognition === undefined
    ? base.recognition
    : names(json.recognition, "recognition", "recognition");
  const synthesis = json.synthesis === undefined
    ? base.synthesis
    : names(json.synthesis, "synthesis", "synthesis");
  const routes: Routes = {};
  if (json.routes !== undefined) {
    if (!isObject(json.routes)) throw new SpeechConfigError("routes must be an object");
    for (const [leg, byLanguage] of Object.entries(json.routes)) {
      if (leg !== "recognition" && leg !== "synthesis") {
        throw new SpeechConfigError(`routes.${leg}: legs are recognition and synthesis`);
      }
      if (!isObject(byLanguage)) throw new SpeechConfigError(`routes.${leg} must be an object`);
      const running = leg === "recognition" ? recognition : synthesis;
      const out: Record<string, string[]> = {};
      for (const [language, list] of Object.entries(byLanguage)) {
        const path = `routes.${leg}.${language}`;
        if (language !== "*" && !/^LANGUAGE_[A-Z]+$/.test(language)) {
          throw new SpeechConfigError(`${path}: a route is keyed by a language name or "*"`);
        }
        out[language] = names(list, path, leg);
        const idle = out[language].find((n) => !running.includes(n));
        if (idle) throw new SpeechConfigError(`${path}: "${idle}" is not in ${leg}`);
      }
      routes[leg] = out;
    }
  }
  const options: SpeechConfig["options"] = {};
  if (json.options !== undefined) {
    if (!isObject(json.options)) throw new SpeechConfigError("options must be an object");
    for (const [name, o] of Object.entries(json.options)) {
      if (!ENGINE_TYPES[name]) throw new SpeechConfigError(`options.${name}: unknown engine`);
      if (!isObject(o)) throw new SpeechConfigError(`options.${name} must be an object`);
      if (Object.keys(o).some((k) => /key|secret|token/i.test(k))) {
        throw new SpeechConfigError(
          `options.${name}: credentials come from the environment, not the speech config`,
        );
      }
      options[name] = o;
    }
  }
  const config = { recognition, synthesis, routes, options };
  for (const name of [...recognition, ...synthesis]) {
    const missing = missingVariables(ENGINE_TYPES[name], env, options[name]);
    if (missing.length) {
      throw new SpeechConfigError(
        `engine "${name}" needs ${missing.join(", ")} in the environment`,
      );
    }
  }
  return config;
}

/** The worker's speech config from its environment (`SPEECH_ENGINES`, inline or a file path). */
export async function loadSpeechConfig(env: Env): Promise<SpeechConfig> {
  const raw = env("SPEECH_ENGINES")?.trim();
  if (!raw) return parseSpeechConfig({}, env);
  let text = raw;
  if (!raw.startsWith("{")) {
    try {
      text = await Deno.readTextFile(raw);
    } catch (err) {
      throw new SpeechConfigError(`SPEECH_ENGINES: cannot read ${raw}: ${(err as Error).message}`);
    }
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new SpeechConfigError(`SPEECH_ENGINES is not JSON: ${(err as Error).message}`);
  }
  return parseSpeechConfig(json, env);
}

/** The matrix a speech config would serve, from the registry's declarations alone. */
export function declaredMatrix(config: SpeechConfig): ServeMatrix {
  const recognition = config.recognition.map((name) => {
    const t = ENGINE_TYPES[name] as RecognitionEngineType;
    return { name, kind: t.kind, languages: t.languages };
  });
  const synthesis = config.synthesis.map((name) => {
    const t = ENGINE_TYPES[name] as SynthesisEngineType;
    return { name, kind: t.kind, catalog: t.catalog, related: t.related };
  });
  return serveMatrix(recognition, synthesis, config.routes);
}
