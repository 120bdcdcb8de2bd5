// GET /api/v1/capabilities: the voices and languages this deployment serves (public).
import type { Context } from "hono";
import { DEFAULT_LANGUAGE, DEFAULT_VOICE } from "../common/capabilities.ts";
import type { ApiDeps } from "./context.ts";

export function capabilities(c: Context, deps: ApiDeps): Response {
  return c.json({
    ...deps.capabilities,
    defaults: { voice: DEFAULT_VOICE, language: DEFAULT_LANGUAGE },
  });
}
