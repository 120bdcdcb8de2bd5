import { createHmac } from "node:crypto";
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { plivoSignatureV3, sameSecret, twilioSignature } from "./signatures.ts";

// The signed strings are built here by hand, as the providers' pages describe them, and signed
// with node:crypto: an implementation apart from signatures.ts's Web Crypto one.
const hmac = (alg: "sha1" | "sha256", key: string, s: string) =>
  createHmac(alg, key).update(s).digest("base64");

Deno.test("Twilio: URL then the POST parameters sorted by name, name and value run together", async () => {
  const url = "https://voice.example.com/api/v1/telephony/twilio/agt_1?x=1";
  const params: [string, string][] = [["To", "+14155550199"], ["CallSid", "CA1"], [
    "From",
    "+14155550100",
  ]];
  const expected = hmac(
    "sha1",
    "tok",
    "https://voice.example.com/api/v1/telephony/twilio/agt_1?x=1CallSidCA1From+14155550100To+14155550199",
  );
  assertEquals(await twilioSignature("tok", url, params), expected);
  assert((await twilioSignature("other", url, params)) !== expected);
});

Deno.test("Plivo V3: a POST's URL, '?', the query sorted, '.', the form sorted, '.', the nonce", async () => {
  const params: [string, string][] = [["To", "9180"], ["From", "9198"], ["CallUUID", "u-1"]];
  const bare = "https://voice.example.com/api/v1/telephony/plivo/agt_1";
  assertEquals(
    await plivoSignatureV3("tok", "POST", bare, params, "123"),
    hmac("sha256", "tok", `${bare}?CallUUIDu-1From9198To9180.123`),
  );
  const withQuery = `${bare}?b=2&a=1`;
  assertEquals(
    await plivoSignatureV3("tok", "POST", withQuery, params, "123"),
    hmac("sha256", "tok", `${bare}?a=1&b=2.CallUUIDu-1From9198To9180.123`),
  );
  // A GET is signed over its URL with the query sorted, and no form.
  assertEquals(
    await plivoSignatureV3("tok", "GET", withQuery, [], "9"),
    hmac("sha256", "tok", `${bare}?a=1&b=2.9`),
  );
});

Deno.test("secrets compare equal only when equal, whatever their lengths", () => {
  assert(sameSecret("abc", "abc"));
  assert(!sameSecret("abc", "abd"));
  assert(!sameSecret("abc", "abcd"));
  assert(!sameSecret("", "a"));
});
