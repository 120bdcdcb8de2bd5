// Random identifiers and secrets: a prefix saying what the thing is, then base62.
const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** `length` base62 characters from the system's CSPRNG (rejection sampling keeps it unbiased). */
export function randomBase62(length: number): string {
  let out = "";
  const bytes = new Uint8Array(length * 2);
  while (out.length < length) {
    crypto.getRandomValues(bytes);
    for (const b of bytes) {
      if (b < 248) out += ALPHABET[b % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export type IdKind = "ws" | "ag" | "key" | "ses" | "tok" | "trk" | "cmp" | "whk";

export function newId(kind: IdKind): string {
  return `${kind}_${randomBase62(20)}`;
}
