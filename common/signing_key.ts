// The session tokens' key, shared by the API (signs) and the workers (verify).
import type { Database } from "../db/client.ts";
import { settingOrCreate } from "../db/service_settings.ts";
import type { Settings } from "./settings.ts";
import { generateSigningJwk } from "./token.ts";

/** The signing key: TOKEN_SIGNING_KEY, else one generated once and kept in the database. */
export async function signingJwk(db: Database, settings: Settings): Promise<string> {
  return settings.tokenSigningKey ??
    await settingOrCreate(db.sql, "token_signing_key", generateSigningJwk);
}
