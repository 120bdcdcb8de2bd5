import { createHmac } from "node:crypto";
import { assertEquals } from "../../../tests/helpers/assert.ts";
import { plivoSignatureV3 } from "./signature.ts";

// The signed string is built here by hand, as the carrier's page describes it, and signed with
// node:crypto: an implementation apart from the Web Crypto one.
const hmac = (alg: "sha1" | "sha256", key: string, s: string) =>
  createHmac(alg, key).update(s).digest("base64");

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
