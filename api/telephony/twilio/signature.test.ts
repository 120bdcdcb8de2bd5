import { createHmac } from "node:crypto";
import { assert, assertEquals } from "../../../tests/helpers/assert.ts";
import { twilioSignature } from "./signature.ts";

// The signed string is built here by hand, as the carrier's page describes it, and signed with
// node:crypto: an implementation apart from the Web Crypto one.
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
