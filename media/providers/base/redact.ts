// The one way a provider's key is kept out of text: every message a provider engine builds from
// what it was told (a handshake error, an error frame, a response body, a runtime's fetch error)
// passes through here before it becomes an error, a log field or a caller's event. Providers
// echo what they were sent, sometimes URL-encoded, so both spellings go.

/** What stands where the key was. */
export const REDACTED = "[redacted]";

/** `text` without `key` (as sent, or percent-encoded); unchanged without a key. */
export function redactKey(text: string, key: string | undefined): string {
  if (!key) return text;
  let out = text.replaceAll(key, REDACTED);
  const encoded = encodeURIComponent(key);
  if (encoded !== key) out = out.replaceAll(encoded, REDACTED);
  return out;
}
