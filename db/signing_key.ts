// The session tokens' key, shared by the API (signs) and the workers (verify): given by the
// environment, or generated once and kept in the database.
import type { Database } from "./client.ts";
import { settingOrCreate } from "./service_settings.ts";
import type { Settings } from "../common/settings.ts";
import { generateSigningJwk } from "../common/token.ts";

/** The signing key: TOKEN_SIGNING_KEY, else one generated once and kept in the database. */
export async function signingJwk(db: Database, settings: Settings): Promise<string> {
  return settings.tokenSigningKey ??
    await settingOrCreate(db.sql, "token_signing_key", generateSigningJwk);
}
