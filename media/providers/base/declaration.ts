// What a speech engine declares to the registry (media/engines/registry.ts): the leg it serves,
// what it serves (statically, so routes, capabilities and docs/languages.md need nothing
// started), the environment variables it reads and how to start it. Each provider folder
// exports its engines' declarations (e.g. providers/sarvam/engines.ts); everything that depends
// on the set of engines (the default speech config, the check that a config's engines have their
// credentials, docs/languages.md, the deploy files' variable lists) is derived from them.
import type { EngineRef } from "../../../common/capabilities.ts";
import type { RecognitionEngine } from "../../stt/engine.ts";
import type { SynthesisCatalog, SynthesisEngine } from "../../tts/engine.ts";

/** What an engine is started with: its options from the speech config, secrets from the env. */
export interface EngineStart {
  options: Record<string, unknown>;
  env: (name: string) => string | undefined;
}

/** An environment variable an engine reads, and the option it becomes. */
export interface EngineVariable {
  name: string;
  /** The engine option it sets (the speech config's `options` win over it). */
  option: string;
  /** A credential: from a Secret, never the speech config, never logged. */
  secret: boolean;
  /** The engine cannot start without it (or, not secret, without its option). */
  required: boolean;
}

interface Declared {
  kind: EngineRef["kind"];
  /** The variables it reads; without one required, the engine is not run by default. */
  env?: readonly EngineVariable[];
}

export interface RecognitionEngineType extends Declared {
  leg: "recognition";
  languages: readonly string[];
  create(start: EngineStart): Promise<RecognitionEngine>;
}

export interface SynthesisEngineType extends Declared {
  leg: "synthesis";
  catalog: SynthesisCatalog;
  /** Catalog language → the related language whose voice speaks it (not a voice of its own). */
  related?: Readonly<Record<string, string>>;
  create(start: EngineStart): Promise<SynthesisEngine>;
}

export type EngineType = RecognitionEngineType | SynthesisEngineType;

/** The variables an engine cannot start without, missing from `env` and from its `options`. */
export function missingVariables(
  type: EngineType,
  env: EngineStart["env"],
  options: Record<string, unknown> = {},
): string[] {
  return (type.env ?? [])
    .filter((v) => v.required && !env(v.name) && (v.secret || options[v.option] === undefined))
    .map((v) => v.name);
}

/** An engine's options: the speech config's, over what its variables give. */
export function engineOptions(type: EngineType, start: EngineStart): Record<string, unknown> {
  const fromEnv: Record<string, unknown> = {};
  for (const v of type.env ?? []) {
    const value = start.env(v.name);
    if (value) fromEnv[v.option] = value;
  }
  return { ...fromEnv, ...start.options };
}
