// A refused call in words: the service's own message with its status and code, and what to do.
import assert from "node:assert/strict";
import { describeRefusal, describeUnreachable } from "./refusal.ts";

Deno.test("a wrong origin names the origin and the key's allowlist", () => {
  const r = describeRefusal({
    status: 403,
    code: "origin_not_allowed",
    message: "This publishable key may not be used from this origin.",
    details: { origin: "http://127.0.0.1:9999" },
  }, "http://localhost:9999");
  assert.equal(
    r.said,
    "The service refused the call (403 origin_not_allowed): This publishable key may not be " +
      "used from this origin.",
  );
  assert.match(
    r.todo,
    /^Give this page a publishable key whose allowed origins include http:\/\/127\.0\.0\.1:9999 /,
  );
});

Deno.test("each refusal says what to do next", () => {
  const todo = (status: number, code?: string, details?: Record<string, unknown>) =>
    describeRefusal({ status, code, details }, "http://x.example").todo;
  assert.match(todo(401, "invalid_api_key"), /current publishable key/);
  assert.match(todo(404, "agent_not_found"), /agent id the key was made for/);
  assert.match(todo(429, "rate_limited", { retry_after_seconds: 7 }), /^Wait 7 s/);
  assert.match(todo(400, "invalid_request", { field: "config.tts.voice" }), /config\.tts\.voice/);
  assert.match(todo(503, "unavailable"), /try again shortly/);
  assert.match(todo(418), /service's message/);
  assert.equal(describeRefusal({ status: 500 }, "").said, "The service refused the call (500)");
  assert.match(
    describeUnreachable("http://127.0.0.1:1", "TypeError: Failed to fetch").said,
    /could not be reached \(TypeError: Failed to fetch\)/,
  );
});
