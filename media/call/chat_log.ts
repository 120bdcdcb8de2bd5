// What the session log keeps of a chat frame from the page. A frame RTVI took (at most 64 KiB,
// storable) is kept whole; of a refused one only why, its size and its first
// REFUSED_EXCERPT_CHARS characters: a page may send a megabyte, or a flood, that RTVI refuses, and
// the log must not store it (a 1 MiB frame was one log entry of 1,048,602 characters).

/** How much of a refused frame the log keeps: enough to tell what it was. */
export const REFUSED_EXCERPT_CHARS = 256;

/** The log entry of a refused frame. */
export interface RefusedFrame {
  /** Why RTVI refused or ignored it (at most REFUSED_EXCERPT_CHARS, storable, as the excerpt). */
  refused: string;
  /** Its length in UTF-16 code units (JavaScript's string length); the excerpt is all of it
   * when this equals the excerpt's length. */
  chars: number;
  /** Its first REFUSED_EXCERPT_CHARS, storable: U+0000 and unpaired surrogates (which jsonb
   * refuses, and which a cut may leave) become U+FFFD. */
  excerpt: string;
}

/** At most REFUSED_EXCERPT_CHARS of `text`, storable in jsonb. */
function bounded(text: string): string {
  return text.slice(0, REFUSED_EXCERPT_CHARS).toWellFormed().replaceAll("\0", "\uFFFD");
}

export function refusedFrame(text: string, refusal: string): RefusedFrame {
  // The reason is bounded too: it may quote the frame (a refused key's path).
  return { refused: bounded(refusal), chars: text.length, excerpt: bounded(text) };
}

/** The `data` of a frame's `page`/`chat` log entry: the frame, or what is kept of a refused one. */
export function chatLogData(text: string, refusal?: string): string | RefusedFrame {
  return refusal === undefined ? text : refusedFrame(text, refusal);
}
