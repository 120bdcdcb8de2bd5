// A node row without a serve matrix (an older worker) is taken to serve LOCAL_SERVES: that must
// be what the local engines' registry declarations route to.
import { assertEquals } from "../../tests/helpers/assert.ts";
import { LOCAL_SERVES } from "../../common/capabilities.ts";
import { declaredMatrix, defaultSpeechConfig } from "./speech_config.ts";

Deno.test("the local engines' declared matrix is what nodes without a matrix are taken to serve", () => {
  assertEquals(declaredMatrix(defaultSpeechConfig(() => undefined)), LOCAL_SERVES);
});
