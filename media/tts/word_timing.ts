// Turns espeak's event stream into WordTiming records on the words of the original text.
//
// espeak's own word spans are rough: its length is sometimes short ("isn't" → 3), one written
// token may be several spoken words ("3.5" → three point five), and a word ends where the next
// one starts, pause included. So words here are the whitespace-separated tokens of the text
// (edge punctuation and symbols trimmed); each espeak word event is attributed to the token it starts in,
// and a word's sound ends at the first pause phoneme after its last sounding phoneme.

import type { EspeakEvent } from "../../wasm/espeak.ts";
import type { WordTiming } from "./engine.ts";

interface Span {
  /** Where the whole token starts (for looking events up). */
  token: number;
  /** The word proper. */
  start: number;
  end: number;
}

/** Whitespace-separated tokens, edge punctuation/symbols trimmed unless that is all there is. */
export function wordSpans(text: string): Span[] {
  const spans: Span[] = [];
  for (const m of text.matchAll(/\S+/gu)) {
    const token = m[0];
    let start = m.index, end = m.index + token.length;
    const lead = /^[\p{P}\p{S}]+/u.exec(token)?.[0].length ?? 0;
    const trail = /[\p{P}\p{S}]+$/u.exec(token)?.[0].length ?? 0;
    if (lead + trail < token.length) {
      start += lead;
      end -= trail;
    }
    spans.push({ token: m.index, start, end });
  }
  return spans;
}

/** Feed it each chunk's events in order; it hands back words as their timings become final. */
export class WordAligner {
  readonly #text: string;
  readonly #spans: Span[];
  #open = -1; // index in #spans of the word being spoken
  #startMs = 0;
  #sounded = false;
  #pauseMs: number | null = null;
  #lastEndMs = 0;

  constructor(text: string) {
    this.#text = text;
    this.#spans = wordSpans(text);
  }

  /** One chunk's events; returns the words that ended in them. */
  push(events: readonly EspeakEvent[]): WordTiming[] {
    const done: WordTiming[] = [];
    for (const e of events) {
      if (e.type === "word" && e.charIndex >= 0 && this.#spans.length) {
        const at = this.#spanAt(e.charIndex);
        if (at <= this.#open) continue; // another spoken word of the same token
        if (this.#open >= 0) done.push(this.#close(e.audioMs));
        this.#open = at;
        this.#startMs = Math.max(e.audioMs, this.#lastEndMs);
        this.#sounded = false;
        this.#pauseMs = null;
      } else if (e.type === "phoneme" && this.#open >= 0) {
        if (e.id === "" || e.id === undefined) {
          if (this.#sounded && this.#pauseMs === null) this.#pauseMs = e.audioMs;
        } else {
          this.#sounded = true;
          this.#pauseMs = null;
        }
      }
    }
    return done;
  }

  /** The audio ended at `totalMs`; returns the last word, if one is open. */
  finish(totalMs: number): WordTiming[] {
    if (this.#open < 0 || this.#open >= this.#spans.length) return [];
    const last = this.#close(totalMs);
    this.#open = this.#spans.length; // nothing after the end
    return [last];
  }

  #close(nextStartMs: number): WordTiming {
    const { start, end } = this.#spans[this.#open];
    const endMs = Math.max(this.#startMs, Math.min(this.#pauseMs ?? nextStartMs, nextStartMs));
    this.#lastEndMs = endMs;
    return {
      text: this.#text.slice(start, end),
      charStart: start,
      charEnd: end,
      startMs: this.#startMs,
      endMs,
    };
  }

  /** The token containing `i`, or the one before it when `i` is in whitespace. */
  #spanAt(i: number): number {
    let lo = 0, hi = this.#spans.length - 1, found = 0;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.#spans[mid].token <= i) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  }
}
