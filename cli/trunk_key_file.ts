// TRUNK_CREDENTIALS_KEY for `deno task run` when the environment gives none: made once and kept
// in the run's own data folder (owner-only), beside its database but not in it, so trunks'
// outbound passwords sealed on this laptop still open after a restart. A deployment sets the
// variable itself (README "Environment").
import { join } from "node:path";
import { newSealingKeyText } from "../common/sealed.ts";

export const TRUNK_KEY_FILE = "trunk-credentials-key";

/** The kept key's base64 text, made and written (0600) the first time. */
export async function trunkKeyOrCreate(dataDir: string): Promise<string> {
  const path = join(dataDir, TRUNK_KEY_FILE);
  try {
    const kept = (await Deno.readTextFile(path)).trim();
    if (kept) return kept;
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  await Deno.mkdir(dataDir, { recursive: true, mode: 0o700 });
  const key = newSealingKeyText();
  const tmp = `${path}.${crypto.randomUUID().slice(0, 8)}.tmp`;
  await Deno.writeTextFile(tmp, key + "\n", { mode: 0o600 });
  await Deno.chmod(tmp, 0o600);
  await Deno.rename(tmp, path);
  return key;
}
