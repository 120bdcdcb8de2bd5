// What nodes registered without a matrix are taken to serve (LOCAL_SERVES, which sessions.connect
// and /api/v1/capabilities then report) is exactly what the worker's local engines serve.
import { assertEquals } from "../../tests/helpers/assert.ts";
import { LOCAL_SERVES } from "../../common/capabilities.ts";
import { localEngines } from "../../tests/helpers/local_engines.ts";

Deno.test("the local engines serve exactly the advertised voices and languages", async () => {
  const engines = await localEngines();
  try {
    assertEquals(engines.serves, LOCAL_SERVES);
  } finally {
    await engines.close();
  }
});
