// The recogniser's pronunciation dictionary cut to the words its language model knows. The CMU
// dictionary has 134.7 k entries; the generic en-us LM knows 72.5 k words (79.4 k entries with
// their variants). The search never proposes a word the LM does not know, so the other entries
// only cost every decoder memory and ps_init time (media/stt/README.md: per decoder 58 -> 47 MB
// with the shared LM, ps_init 440 -> 320 ms). Derived once per machine from the packaged files
// and cached under a name that carries their sizes and times, so a new package makes a new cut.
import { lmUnigramScores } from "./pocketsphinx_ffi.ts";

/** Where derived dictionaries are kept: `$TMPDIR/voice-pocketsphinx` (or /tmp). */
export function defaultCacheDir(): string {
  return `${Deno.env.get("TMPDIR") || "/tmp"}/voice-pocketsphinx`;
}

/** How far the dictionary is cut beyond the LM's words. */
export interface VocabularyCut {
  /** Keep only the LM's this many most probable words (unigram probability); 0: all of them. */
  vocabulary?: number;
  /** Words kept whatever their rank, when the LM knows them (the turn lexicon's "mhm", "uh"). */
  keep?: readonly string[];
}

/**
 * The dictionary entries (lines) whose word, variants included, the LM at `lm` knows; with a
 * `vocabulary`, only those of its most probable words (ties keep dictionary order) and `keep`.
 */
export function cutToLmWords(dictText: string, lm: string, cut: VocabularyCut = {}): string[] {
  const { vocabulary = 0, keep = [] } = cut;
  const lines = dictText.split("\n").filter((l) => l.trim() !== "");
  // "word(2) PH ONES" is the second pronunciation of "word": the LM knows the base word.
  const words = lines.map((l) => l.slice(0, l.search(/\s/)).replace(/\(\d+\)$/, ""));
  const unique = [...new Set(words)];
  const scores = lmUnigramScores(lm, unique);
  let known = unique.map((w, i) => ({ w, score: scores[i], i })).filter((k) => k.score !== null);
  const inLm = new Set(known.map((k) => k.w));
  const kept = new Set(keep.filter((w) => inLm.has(w)));
  if (vocabulary > 0 && known.length > vocabulary) {
    known = known.sort((a, b) => b.score! - a.score! || a.i - b.i).slice(0, vocabulary);
  }
  for (const k of known) kept.add(k.w);
  return lines.filter((_, i) => kept.has(words[i]));
}

/**
 * The path of `dict` cut to the words of `lm` (and by `cut`), derived and written into `cacheDir`
 * if not there yet. Safe to call from several threads or processes at once (each writes its own
 * temporary file and renames it into place; the contents are the same). Throws if it cannot read
 * or write.
 */
export function lmWordsDictionary(
  dict: string,
  lm: string,
  cacheDir = defaultCacheDir(),
  cut: VocabularyCut = {},
): string {
  const stamp = (p: string) => {
    const s = Deno.statSync(p);
    return `${s.size}-${s.mtime?.getTime() ?? 0}`;
  };
  const base = dict.slice(dict.lastIndexOf("/") + 1).replace(/\.dict$/, "");
  const path = `${cacheDir}/${base}.lm-words${cutName(cut)}.${stamp(dict)}.${stamp(lm)}.dict`;
  try {
    Deno.statSync(path);
    return path;
  } catch {
    // not derived yet
  }
  const lines = cutToLmWords(Deno.readTextFileSync(dict), lm, cut);
  Deno.mkdirSync(cacheDir, { recursive: true });
  const tmp = `${path}.${Deno.pid}.${crypto.randomUUID()}.tmp`;
  Deno.writeTextFileSync(tmp, lines.join("\n") + "\n");
  Deno.renameSync(tmp, path);
  return path;
}

/** ".top20000-k1a2b3c4" for a cut to 20 k words keeping a list whose hash starts 1a2b3c4. */
function cutName({ vocabulary = 0, keep = [] }: VocabularyCut): string {
  if (vocabulary <= 0) return "";
  // FNV-1a of the sorted list: the same words give the same file whatever their order.
  let h = 0x811c9dc5;
  for (const c of [...new Set(keep)].sort().join("\n")) {
    h = Math.imul(h ^ c.charCodeAt(0), 0x01000193) >>> 0;
  }
  return `.top${vocabulary}${keep.length ? `-k${h.toString(16)}` : ""}`;
}
