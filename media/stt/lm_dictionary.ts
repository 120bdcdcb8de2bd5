// The recogniser's pronunciation dictionary cut to the words its language model knows. The CMU
// dictionary has 134.7 k entries; the generic en-us LM knows 72.5 k words (79.4 k entries with
// their variants). The search never proposes a word the LM does not know, so the other entries
// only cost every decoder memory and ps_init time (media/stt/README.md: per decoder 58 -> 47 MB
// with the shared LM, ps_init 440 -> 320 ms). Derived once per machine from the packaged files
// and cached under a name that carries their sizes and times, so a new package makes a new cut.
import { lmKnows } from "./pocketsphinx_ffi.ts";

/** Where derived dictionaries are kept: `$TMPDIR/voice-pocketsphinx` (or /tmp). */
export function defaultCacheDir(): string {
  return `${Deno.env.get("TMPDIR") || "/tmp"}/voice-pocketsphinx`;
}

/** The dictionary entries (lines) whose word, variants included, the LM at `lm` knows. */
export function cutToLmWords(dictText: string, lm: string): string[] {
  const lines = dictText.split("\n").filter((l) => l.trim() !== "");
  // "word(2) PH ONES" is the second pronunciation of "word": the LM knows the base word.
  const words = lines.map((l) => l.slice(0, l.search(/\s/)).replace(/\(\d+\)$/, ""));
  const unique = [...new Set(words)];
  const knows = lmKnows(lm, unique);
  const known = new Set(unique.filter((_, i) => knows[i]));
  return lines.filter((_, i) => known.has(words[i]));
}

/**
 * The path of `dict` cut to the words of `lm`, derived and written into `cacheDir` if not there
 * yet. Safe to call from several threads or processes at once (each writes its own temporary file
 * and renames it into place; the contents are the same). Throws if it cannot read or write.
 */
export function lmWordsDictionary(dict: string, lm: string, cacheDir = defaultCacheDir()): string {
  const stamp = (p: string) => {
    const s = Deno.statSync(p);
    return `${s.size}-${s.mtime?.getTime() ?? 0}`;
  };
  const base = dict.slice(dict.lastIndexOf("/") + 1).replace(/\.dict$/, "");
  const path = `${cacheDir}/${base}.lm-words.${stamp(dict)}.${stamp(lm)}.dict`;
  try {
    Deno.statSync(path);
    return path;
  } catch {
    // not derived yet
  }
  const lines = cutToLmWords(Deno.readTextFileSync(dict), lm);
  Deno.mkdirSync(cacheDir, { recursive: true });
  const tmp = `${path}.${Deno.pid}.${crypto.randomUUID()}.tmp`;
  Deno.writeTextFileSync(tmp, lines.join("\n") + "\n");
  Deno.renameSync(tmp, path);
  return path;
}
