// The engine seam's layers, as imports: calls use the routing (media/engines/), the routing uses
// the providers (media/providers/) and the local engines, and those implement the stage
// contracts (media/stt/, media/tts/). Nothing imports upward: the routing knows nothing of calls,
// a provider or a stage nothing of the routing above it. Product files only (tests may use all).
import { assertEquals } from "../../tests/helpers/assert.ts";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const MEDIA = fileURLToPath(new URL("../", import.meta.url));

/** Folder (under media/) → folders it must not import from. */
const BELOW: Record<string, string[]> = {
  engines: ["call"],
  providers: ["engines", "call"],
  stt: ["engines", "call", "providers/sarvam", "providers/indic_parler"],
  tts: ["engines", "call", "providers/sarvam", "providers/indic_parler"],
  threads: ["engines", "call", "providers", "stt", "tts"],
};

function productFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(dir)) {
    const path = join(dir, e.name);
    if (e.isDirectory) out.push(...productFiles(path));
    else if (/\.ts$/.test(e.name) && !/[._]test\.ts$/.test(e.name)) out.push(path);
  }
  return out;
}

Deno.test("the routing, the providers and the stages import nothing above them", () => {
  const upward: string[] = [];
  for (const [folder, forbidden] of Object.entries(BELOW)) {
    for (const file of productFiles(join(MEDIA, folder))) {
      const text = Deno.readTextFileSync(file);
      for (const m of text.matchAll(/(?:from|import)\s*\(?\s*"(\.[^"]+)"/g)) {
        const target = relative(MEDIA, join(dirname(file), m[1]));
        if (forbidden.some((f) => target === f || target.startsWith(`${f}/`))) {
          upward.push(`${relative(MEDIA, file)} → ${target}`);
        }
      }
    }
  }
  assertEquals(upward, []);
});
