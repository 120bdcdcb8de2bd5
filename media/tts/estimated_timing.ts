// Word timings for engines that give none (the providers): the unit's audio length shared out
// over its words, so the worker can still tell which prefix of a unit the caller heard.
//
// Words are the tokens of word_timing.ts (whitespace-separated, edge punctuation trimmed), so a
// word's charEnd is always a whole-word boundary: a heard prefix never ends inside a grapheme or
// before a vowel sign (matra) of Devanagari, Bengali, Ol Chiki... Each word's share of the time
// is its length in grapheme clusters (a conjunct like "स्ते" is one, close to a syllable), and
// each gap between words adds a pause: short for a space, longer after a comma, longest after a
// sentence end. The first word starts at 0 and the last ends at durationMs: leading and trailing
// silence are counted as speech, so a word is never taken as heard before it can have been.

import type { WordTiming } from "./engine.ts";
import { wordSpans } from "./word_timing.ts";

/** Pause weights, in grapheme clusters of speech (~70 ms each at a conversational rate). */
const GAP_WEIGHT = 0.3;
const CLAUSE_WEIGHT = 2.5;
const SENTENCE_WEIGHT = 5;

const SENTENCE_END = /[.!?।॥᱾᱿؟۔]/u;
const CLAUSE_END = /[,;:،؛—–…]/u;

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

function graphemeCount(s: string): number {
  let n = 0;
  for (const _ of graphemes.segment(s)) n++;
  return n;
}

/** The pause a gap between two words stands for, by the punctuation in it. */
function gapWeight(gap: string): number {
  if (SENTENCE_END.test(gap)) return SENTENCE_WEIGHT;
  if (CLAUSE_END.test(gap)) return CLAUSE_WEIGHT;
  return GAP_WEIGHT;
}

/**
 * Timings for the words of `text` spoken over `durationMs` of audio, every one marked
 * `estimated`. Offsets are UTF-16 offsets into `text`; times are in order (rounded to the ms),
 * the first word starting at 0 and the last ending at exactly `durationMs`.
 */
export function estimateWordTimings(text: string, durationMs: number): WordTiming[] {
  const spans = wordSpans(text);
  if (!spans.length) return [];
  const total = Math.max(0, durationMs);
  // Weight of each word, and of the gap before it (none before the first).
  const words = spans.map((s) => Math.max(1, graphemeCount(text.slice(s.start, s.end))));
  const gaps = spans.map((s, i) => i === 0 ? 0 : gapWeight(text.slice(spans[i - 1].end, s.start)));
  const sum = words.reduce((a, b) => a + b, 0) + gaps.reduce((a, b) => a + b, 0);
  const msPer = total / sum;
  const out: WordTiming[] = [];
  let at = 0;
  for (let i = 0; i < spans.length; i++) {
    at += gaps[i];
    const { start, end } = spans[i];
    const last = i === spans.length - 1;
    out.push({
      text: text.slice(start, end),
      charStart: start,
      charEnd: end,
      startMs: Math.round(at * msPer),
      endMs: last ? total : Math.round((at + words[i]) * msPer),
      estimated: true,
    });
    at += words[i];
  }
  return out;
}
