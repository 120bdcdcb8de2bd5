// A brain's end reason as the session record keeps it (db/sessions.ts, webhooks' session.ended).

/** The longest brain end reason a record keeps (db/migrations/0005_brain_end_reason.sql). */
export const BRAIN_END_REASON_CHARS = 200;

/** A brain's end reason as the record keeps it: its first 200 characters; null when empty. */
export function keptBrainEndReason(reason: string | null | undefined): string | null {
  // By code points, as char_length counts them: a cut never splits a surrogate pair.
  const chars = Array.from(reason ?? "");
  return chars.length === 0 ? null : chars.slice(0, BRAIN_END_REASON_CHARS).join("");
}
