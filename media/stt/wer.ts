/** Word error rate, to measure recognisers and to let tests say "close to the script". */

/** Lower-case words with punctuation dropped (apostrophes kept: "don't" stays one word). */
export function words(text: string): string[] {
  return text.toLowerCase().replace(/[^a-z0-9' ]+/g, " ").split(/\s+/).filter((w) => w !== "");
}

export interface WerCount {
  /** Substitutions + deletions + insertions (word-level Levenshtein distance). */
  errors: number;
  /** Words in the reference. */
  words: number;
}

/** Edit distance between the word sequences of `reference` and `hypothesis`. */
export function werCount(reference: string, hypothesis: string): WerCount {
  const r = words(reference), h = words(hypothesis);
  let prev = Array.from({ length: h.length + 1 }, (_, j) => j);
  for (let i = 1; i <= r.length; i++) {
    const row = [i];
    for (let j = 1; j <= h.length; j++) {
      row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (r[i - 1] === h[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return { errors: prev[h.length], words: r.length };
}

/** Errors per reference word (can exceed 1 with many insertions); 0 for two empty texts. */
export function wordErrorRate(reference: string, hypothesis: string): number {
  const c = werCount(reference, hypothesis);
  return c.words === 0 ? (c.errors === 0 ? 0 : 1) : c.errors / c.words;
}
