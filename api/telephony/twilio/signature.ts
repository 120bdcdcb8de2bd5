// The signature Twilio puts on its webhooks (X-Twilio-Signature), checked with the account's auth
// token (../signatures.ts: why written here rather than taken from Twilio's SDK).
import { hmacBase64 } from "../signatures.ts";

/**
 * Twilio's X-Twilio-Signature ("Webhooks security", https://www.twilio.com/docs/usage/security
 * #validating-requests): base64 HMAC-SHA1, keyed with the auth token, of the full URL Twilio
 * requested followed by every POST parameter sorted by name, each name then its value, with no
 * separators.
 */
export function twilioSignature(
  authToken: string,
  url: string,
  params: [string, string][],
): Promise<string> {
  const sorted = [...params].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return hmacBase64("SHA-1", authToken, url + sorted.map(([k, v]) => k + v).join(""));
}
