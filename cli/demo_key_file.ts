// The demo page's publishable key, kept by `deno task run` in its own data directory so that a
// restart prints (and the open demo tabs keep using) the same key. The database holds only the
// key's hash, so the raw key can only come back from here. The file is the local run's alone:
// mode 0600, never logged, and reused only while the key still verifies (not revoked, same
// agent and origins), which the caller checks.
import { join } from "node:path";

export const DEMO_KEY_FILE = "demo-key.json";

interface Stored {
  publishable_key: string;
}

/** The stored raw key, or undefined when there is none or the file is not ours to read. */
export async function readDemoKey(dataDir: string): Promise<string | undefined> {
  const path = join(dataDir, DEMO_KEY_FILE);
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch {
    return undefined;
  }
  // Loosened by hand (or by a copy): put it back to owner-only before trusting it further.
  const mode = (await Deno.stat(path)).mode;
  if (mode !== null && (mode & 0o077) !== 0) await Deno.chmod(path, 0o600);
  try {
    const key = (JSON.parse(text) as Partial<Stored>).publishable_key;
    return typeof key === "string" && key.startsWith("pk_") ? key : undefined;
  } catch {
    return undefined; // not JSON: a new key replaces it
  }
}

/** Stores the raw key, owner-only, replacing the file in one rename. */
export async function writeDemoKey(dataDir: string, publishableKey: string): Promise<void> {
  await Deno.mkdir(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, DEMO_KEY_FILE);
  const tmp = `${path}.${crypto.randomUUID().slice(0, 8)}.tmp`;
  const stored: Stored = { publishable_key: publishableKey };
  await Deno.writeTextFile(tmp, JSON.stringify(stored) + "\n", { mode: 0o600 });
  await Deno.chmod(tmp, 0o600); // writeTextFile's mode applies only to a file it creates
  await Deno.rename(tmp, path);
}
