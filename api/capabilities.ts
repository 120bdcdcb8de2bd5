// GET /api/v1/capabilities (public): what the live worker nodes serve. The flat lists are the
// names sessions.connect accepts; `languages` says, per language, which engines recognise it and
// which speak it in each persona, in routing order (the first serves, the rest are fallbacks),
// whether each runs on the worker (`local`) or at a provider, and, where an engine has no voice
// of its own for the language, `via`: the related language whose voice speaks it (espeak-ng
// speaks Sanskrit `via` LANGUAGE_HI), so a customer can route that language to a native voice.
import type { Context } from "hono";
import { DEFAULT_LANGUAGE, DEFAULT_VOICE, ROSTER_LANGUAGES } from "../common/capabilities.ts";
import type { ApiDeps } from "./context.ts";

export async function capabilities(c: Context, deps: ApiDeps): Promise<Response> {
  const caps = await deps.capabilities.get();
  const languages = Object.fromEntries(
    [...ROSTER_LANGUAGES].filter((l) => caps.merged[l]).map((l) => [l, caps.merged[l]]),
  );
  return c.json({
    voices: caps.voices,
    tts_languages: caps.tts_languages,
    stt_languages: caps.stt_languages,
    defaults: { voice: DEFAULT_VOICE, language: DEFAULT_LANGUAGE },
    languages,
    live_nodes: caps.nodes.length,
  });
}
