// What the caller actually heard of a unit: the words whose audio was sent in full. A word cut
// in the middle was not heard; the text is always a prefix of the unit's text.
import type { WordTiming } from "../tts/engine.ts";

export type { WordTiming };

/**
 * The heard prefix of `text` after `playedMs` of its audio went out. `complete` says the whole
 * unit was played, in which case everything was heard, trailing punctuation included.
 */
export function heardText(
  text: string,
  words: readonly WordTiming[],
  playedMs: number,
  complete = false,
): string {
  if (complete) return text;
  let end = 0;
  for (const w of words) {
    if (w.endMs > playedMs) break;
    end = Math.max(end, Math.min(w.charEnd, text.length));
  }
  return text.slice(0, end);
}
