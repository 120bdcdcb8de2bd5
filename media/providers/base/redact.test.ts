// A provider's key never leaves in a message: one function, one output, whatever the provider.
import { assertEquals } from "../../../tests/helpers/assert.ts";
import { REDACTED, redactKey } from "./redact.ts";

Deno.test("a key is replaced by the same mark wherever it appears, also percent-encoded", () => {
  assertEquals(
    redactKey("bad key sk_1/2+3 (sent sk_1/2+3)", "sk_1/2+3"),
    `bad key ${REDACTED} (sent ${REDACTED})`,
  );
  assertEquals(redactKey("GET /ws?key=sk_1%2F2%2B3", "sk_1/2+3"), `GET /ws?key=${REDACTED}`);
});

Deno.test("without a key, or without the key in it, the text is unchanged", () => {
  assertEquals(redactKey("HTTP 403 forbidden", undefined), "HTTP 403 forbidden");
  assertEquals(redactKey("HTTP 403 forbidden", ""), "HTTP 403 forbidden");
  assertEquals(redactKey("HTTP 403 forbidden", "sk_live"), "HTTP 403 forbidden");
});
