import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { endpointUrlProblem } from "./endpoint_url.ts";

Deno.test("https anywhere and http only to this machine are accepted", () => {
  for (
    const ok of [
      "https://hooks.example.com/voice",
      "http://127.0.0.1:8080/h",
      "http://localhost/h",
      "http://[::1]:9/h",
    ]
  ) assertEquals(endpointUrlProblem(ok), undefined, ok);
});

Deno.test("plain http elsewhere, other schemes, credentials and non-URLs are refused, saying why", () => {
  assert(endpointUrlProblem("http://hooks.example.com/voice")!.includes("must be https://"));
  assert(endpointUrlProblem("http://10.0.0.5/h")!.includes("only to 127.0.0.1"));
  assert(endpointUrlProblem("ftp://example.com/")!.includes("not ftp:"));
  assert(endpointUrlProblem("https://u:p@example.com/")!.includes("credentials"));
  assert(endpointUrlProblem("example.com")!.includes("is not a URL"));
});
