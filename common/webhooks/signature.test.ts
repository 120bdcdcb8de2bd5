import { assertEquals, assertMatch } from "../../tests/helpers/assert.ts";
import { Webhook } from "standardwebhooks";
import { newWebhookSecret, secretBytes, signedHeaders } from "./signature.ts";

// The specification's own published example (standard-webhooks repository,
// libraries/javascript/src/webhook.test.ts "sign function works", the same vector the other
// libraries' tests use).
const SPEC = {
  secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
};

Deno.test("the specification's published example signs to its published signature", async () => {
  const h = await signedHeaders(SPEC.secret, SPEC.id, SPEC.timestamp, SPEC.body);
  assertEquals(h["webhook-signature"], SPEC.signature);
  assertEquals(h["webhook-id"], SPEC.id);
  assertEquals(h["webhook-timestamp"], "1614265330");
});

Deno.test("npm standardwebhooks verifies what we sign with a new secret, and refuses a change", async () => {
  const secret = newWebhookSecret();
  assertMatch(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  assertEquals(secretBytes(secret).length, 32);
  const body = JSON.stringify({ type: "session.ended", data: { text: "नमस्ते ✓" } });
  const now = Math.floor(Date.now() / 1000);
  const headers = await signedHeaders(secret, "msg_1", now, body);
  assertEquals(new Webhook(secret).verify(body, headers), JSON.parse(body));
  let refused = false;
  try {
    new Webhook(secret).verify(body.replace("ended", "ended "), headers);
  } catch {
    refused = true;
  }
  assertEquals(refused, true);
});

Deno.test("a Python verifier on the standard library alone accepts our signature (docs/webhooks.md)", async () => {
  const secret = newWebhookSecret();
  const body = '{"type":"session.started","data":{"session_id":"ses_1"}}';
  const headers = await signedHeaders(secret, "msg_py", Math.floor(Date.now() / 1000), body);
  const source = await Deno.readTextFile(new URL("./verify_example.py", import.meta.url));
  const run = async (b: string) =>
    (await new Deno.Command("python3", {
      args: ["-c", source],
      env: { SECRET: secret, BODY: b, HEADERS: JSON.stringify(headers) },
    }).output()).code;
  assertEquals(await run(body), 0);
  assertEquals(await run(body + " "), 1);
});
