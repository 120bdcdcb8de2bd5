// A transliterated text that remembers where each of its characters came from, so word timings
// made on the transliteration can be put back on the caller's original text.
import type { WordTiming } from "../engine.ts";

export interface Transliteration {
  /** The text the related voice reads. */
  text: string;
  /** For each UTF-16 unit of `text`, the [start, end) of the original it was made from. */
  from: Int32Array;
  to: Int32Array;
}

/** Builds a transliteration piece by piece, each piece tagged with its source span. */
export class TransliterationBuilder {
  #text: string[] = [];
  #from: number[] = [];
  #to: number[] = [];

  /** Appends `out`, made from original[start, end). */
  push(out: string, start: number, end: number): void {
    for (let i = 0; i < out.length; i++) {
      this.#text.push(out[i]);
      this.#from.push(start);
      this.#to.push(end);
    }
  }

  /** The last piece's output grows to cover the original up to `end` (a mark with no sound). */
  extendLast(end: number): boolean {
    const n = this.#to.length;
    if (!n) return false;
    const start = this.#from[n - 1];
    for (let i = n - 1; i >= 0 && this.#from[i] === start; i--) {
      this.#to[i] = Math.max(this.#to[i], end);
    }
    return true;
  }

  /** The last UTF-16 unit written, if any. */
  last(): string | undefined {
    return this.#text.at(-1);
  }

  /** Replaces the last `n` units by `out`, over the same source span extended to `end`. */
  replaceLast(n: number, out: string, end: number): void {
    const start = this.#from[this.#from.length - n];
    this.#text.length -= n;
    this.#from.length -= n;
    this.#to.length -= n;
    this.push(out, start, end);
  }

  build(): Transliteration {
    return {
      text: this.#text.join(""),
      from: Int32Array.from(this.#from),
      to: Int32Array.from(this.#to),
    };
  }
}

/** The identity: a text the related voice reads as it is. */
export function unchanged(text: string): Transliteration {
  const from = new Int32Array(text.length), to = new Int32Array(text.length);
  for (let i = 0; i < text.length; i++) [from[i], to[i]] = [i, i + 1];
  return { text, from, to };
}

/**
 * A word timed on `t.text`, put back on `original`: it starts where its first character came
 * from and ends where its last one did, so its offsets slice the original at word boundaries.
 */
export function onOriginal(t: Transliteration, original: string, w: WordTiming): WordTiming {
  if (w.charEnd <= w.charStart) return w;
  const charStart = t.from[w.charStart], charEnd = t.to[w.charEnd - 1];
  return { ...w, text: original.slice(charStart, charEnd), charStart, charEnd };
}
