import { assert } from "../../tests/helpers/assert.ts";
import { sameSecret } from "./signatures.ts";

Deno.test("secrets compare equal only when equal, whatever their lengths", () => {
  assert(sameSecret("abc", "abc"));
  assert(!sameSecret("abc", "abd"));
  assert(!sameSecret("abc", "abcd"));
  assert(!sameSecret("", "a"));
});
