/**
 * Speech units from a streamed LLM reply: cut where a speaker would pause, as the text arrives.
 *
 * A turn handler yields speech units; a model streams tokens ("Hel", "lo Dr", ". Rao", ...).
 * This turns the one into the other:
 *
 * - the first unit may end at a clause (`,` `;` `:` `،` `؛` `—`) once it is `firstMinChars` long,
 *   or at any sentence end, so the caller hears the first audio soon;
 * - later units end at sentence ends only, and only once `minChars` long (short sentences are
 *   joined, which a voice says more naturally);
 * - a unit that reaches `maxChars` without a boundary is cut at the last space before it (never
 *   inside a word, a number, a URL or an e-mail address);
 * - `.` `!` `?` `…` end a sentence only before a space or the end of the stream, so 3.14,
 *   1,00,000, 10:30, example.com/a?b=1 and a.b@example.org stay whole, and not after Dr, Mr, Mrs,
 *   Ms, Prof, e.g., i.e., U.S., a.m., an initial ("J.") or a list number ("1.") starting the unit;
 * - the roster's own full stops end a sentence wherever they stand: Devanagari (and Bengali,
 *   Assamese, Gurmukhi, Gujarati, Odia) danda `।` and double danda `॥`, the Perso-Arabic full
 *   stop `۔` and question mark `؟` (Urdu, Kashmiri, Sindhi), Ol Chiki mucaad `᱾` `᱿` (Santali)
 *   and Meitei Mayek cheikhei `꯫`; Tamil, Telugu, Kannada and Malayalam write `.` `?` `!`;
 * - a line break ends a sentence too (a list item).
 *
 * Lengths count code points. The Python SDK's `voice_brain/units.py` behaves the same, case for
 * case (`sdk/speech_units_cases.json`). Written here rather than taken from a library: the
 * sentence splitters of the field (`Intl.Segmenter`, nltk punkt, Pipecat's and LiveKit's) split
 * whole text or need a model, and none knows every roster script, streams, and has a Python twin.
 * @module
 */

const SPACE = new Set(
  " \t\n\r\f\v\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000",
);
/** End a sentence only before a space: they also stand inside numbers, URLs and abbreviations. */
const LATIN_ENDS = new Set(".!?\u2026");
/** Never inside a word or number: a sentence ends where the run of them does. */
const SCRIPT_ENDS = new Set("\u0964\u0965\u06d4\u061f\u1c7e\u1c7f\uabeb");
const CLAUSES = new Set(",;:\u060c\u061b\u2014");
const CLOSERS = new Set("\"')]}\u201d\u2019\u00bb");
const OPENERS = new Set("\"'([{\u201c\u2018\u00ab");
/** Words that a "." after does not end a sentence after (lower case, without the dot). */
const ABBREVIATIONS = new Set(
  "mr mrs ms dr prof sr jr st mt vs approx dept fig govt inc ltd corp rs smt shri \u0921\u0949"
    .split(" "),
);
const DOTTED = /^(?:[A-Za-z]\.)+[A-Za-z]$/; // e.g, U.S, a.m (the last dot is the end)
const INITIAL = /^[A-Z]$/;
const LIST_NUMBER = /^[0-9]{1,3}$/;

/** How units are cut; every field is a count of code points. */
export interface UnitOptions {
  /** The first unit may end at a clause once this long (default 20). */
  firstMinChars?: number;
  /** Later units end at a sentence once this long; shorter ones are joined (default 30). */
  minChars?: number;
  /** A unit this long without a boundary is cut at a space (default 200). */
  maxChars?: number;
}

const isEnd = (c: string) => LATIN_ENDS.has(c) || SCRIPT_ENDS.has(c);

function trimmed(chars: string[], from = 0, to = chars.length): string[] {
  while (from < to && SPACE.has(chars[from])) from++;
  while (to > from && SPACE.has(chars[to - 1])) to--;
  return chars.slice(from, to);
}

/**
 * Cuts streamed text into speech units: `push` each token, `end` when the stream ends.
 *
 * @example
 * const s = new UnitSplitter();
 * s.push("Hello Dr. Rao, good to hear you. I"); // ["Hello Dr. Rao, good to hear you."]
 * s.end(); // ["I"]
 */
export class UnitSplitter {
  readonly firstMinChars: number;
  readonly minChars: number;
  readonly maxChars: number;
  #text: string[] = []; // code points, so lengths and cuts match the Python SDK's
  #first = true;

  constructor(options: UnitOptions = {}) {
    const { firstMinChars = 20, minChars = 30, maxChars = 200 } = options;
    for (const [name, value] of Object.entries({ firstMinChars, minChars, maxChars })) {
      if (!Number.isInteger(value) || value < 0) {
        throw new RangeError(`UnitSplitter: ${name} must be a whole number >= 0, got ${value}`);
      }
    }
    if (maxChars < 1 || firstMinChars > maxChars || minChars > maxChars) {
      throw new RangeError(
        "UnitSplitter: maxChars must be >= 1 and at least firstMinChars and minChars",
      );
    }
    this.firstMinChars = firstMinChars;
    this.minChars = minChars;
    this.maxChars = maxChars;
  }

  /** Adds streamed text; returns the units it completed (often none). */
  push(text: string): string[] {
    if (typeof text !== "string") {
      throw new TypeError(`UnitSplitter.push: expected a string, got ${typeof text}`);
    }
    for (const c of text) this.#text.push(c);
    return this.#take(false);
  }

  /** The stream ended: returns the last units, the rest of the text included. */
  end(): string[] {
    const units = this.#take(true);
    const rest = trimmed(this.#text).join("");
    this.#text = [];
    if (rest) {
      units.push(rest);
      this.#first = false;
    }
    return units;
  }

  #take(final: boolean): string[] {
    const units: string[] = [];
    for (;;) {
      this.#text = this.#text.slice(this.#leadingSpace());
      const cut = this.#nextCut(final);
      if (cut === undefined) return units;
      const unit = trimmed(this.#text, 0, cut).join("");
      this.#text = this.#text.slice(cut);
      if (unit) {
        units.push(unit);
        this.#first = false;
      }
    }
  }

  #leadingSpace(): number {
    let i = 0;
    while (i < this.#text.length && SPACE.has(this.#text[i])) i++;
    return i;
  }

  /** Where the next unit ends in the text, or undefined to wait for more. */
  #nextCut(final: boolean): number | undefined {
    const text = this.#text;
    const n = text.length;
    for (let i = 0; i < n; i++) {
      const c = text[i];
      let end: number | undefined;
      let sentence = true;
      if (c === "\n") {
        end = i;
      } else if (isEnd(c)) {
        let j = i;
        while (j < n && isEnd(text[j])) j++;
        while (j < n && CLOSERS.has(text[j])) j++;
        if (j === n && !final) break; // the run may go on ("..." or a closing quote): wait
        const run = text.slice(i, j);
        if (run.some((ch) => SCRIPT_ENDS.has(ch))) {
          end = j;
        } else if (
          (j === n || SPACE.has(text[j])) && !(run.join("") === "." && this.#abbreviated(i))
        ) {
          end = j;
        }
        if (end === undefined) {
          i = j - 1;
          continue;
        }
      } else if (CLAUSES.has(c) && this.#first) {
        if ((i + 1 < n && SPACE.has(text[i + 1])) || (i + 1 === n && final)) {
          end = i + 1;
          sentence = false;
        }
      }
      if (end !== undefined) {
        const size = trimmed(text, 0, end).length;
        if (size > this.maxChars) break;
        if (
          (this.#first && (sentence || size >= this.firstMinChars)) ||
          (sentence && size >= this.minChars)
        ) return end;
      }
    }
    if (trimmed(text).length > this.maxChars) return this.#wordCut();
    return undefined;
  }

  /** True when the "." at `dot` follows an abbreviation, an initial or a list number. */
  #abbreviated(dot: number): boolean {
    let start = dot;
    while (start > 0 && !SPACE.has(this.#text[start - 1])) start--;
    let from = start;
    while (from < dot && OPENERS.has(this.#text[from])) from++;
    const word = this.#text.slice(from, dot).join("");
    if (ABBREVIATIONS.has(word.toLowerCase()) || DOTTED.test(word) || INITIAL.test(word)) {
      return true;
    }
    return start === 0 && LIST_NUMBER.test(word);
  }

  /**
   * The last space that leaves a unit of at most `maxChars`, else the first space after (a long
   * URL stays whole), else undefined.
   */
  #wordCut(): number | undefined {
    const text = this.#text;
    const window = Math.min(text.length, this.maxChars + 1);
    for (let k = window - 1; k > 0; k--) if (SPACE.has(text[k])) return k;
    for (let k = window; k < text.length; k++) if (SPACE.has(text[k])) return k;
    return undefined;
  }
}

/**
 * Speech units from a stream of text tokens, as an async generator to `yield*` from `onTurn`:
 *
 * ```ts
 * async *onTurn(turn) {
 *   yield* speechUnits(myLlm.stream(turn.text, { signal: turn.signal }), { signal: turn.signal });
 * }
 * ```
 *
 * Each unit is yielded as soon as the token that completes it arrives. With `signal` (the turn's:
 * the caller talked over the bot) it ends at once, even while `tokens` is still waiting for the
 * model, and asks `tokens` to end (`return()`). A JavaScript generator that is waiting cannot be
 * stopped from outside: give the same signal to the model's request so the wait itself ends.
 * See `UnitSplitter` for the rules.
 */
export async function* speechUnits(
  tokens: AsyncIterable<string> | Iterable<string>,
  options: UnitOptions & { signal?: AbortSignal } = {},
): AsyncGenerator<string, void, undefined> {
  const { signal, ...cut } = options;
  const splitter = new UnitSplitter(cut);
  const source = Symbol.asyncIterator in tokens
    ? tokens[Symbol.asyncIterator]()
    : (tokens as Iterable<string>)[Symbol.iterator]();
  let aborted: Promise<IteratorResult<string>> | undefined;
  if (signal) {
    aborted = new Promise((resolve) => {
      if (signal.aborted) resolve({ done: true, value: undefined });
      signal.addEventListener("abort", () => resolve({ done: true, value: undefined }), {
        once: true,
      });
    });
  }
  let finished = false;
  try {
    for (;;) {
      const next = aborted ? await Promise.race([source.next(), aborted]) : await source.next();
      if (signal?.aborted) return;
      if (next.done) break;
      yield* splitter.push(next.value);
    }
    finished = true;
    yield* splitter.end();
  } finally {
    // Ended early (aborted, or the consumer stopped): let the token stream close too.
    if (!finished) void Promise.resolve(source.return?.()).catch(() => {});
  }
}
