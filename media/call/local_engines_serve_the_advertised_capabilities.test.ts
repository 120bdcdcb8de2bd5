// What /api/v1/capabilities reports and sessions.connect accepts (LOCAL_ENGINES) is exactly what
// the worker's local engines serve.
import { assertEquals } from "../../tests/helpers/assert.ts";
import { LOCAL_ENGINES } from "../../common/capabilities.ts";
import { localEngines } from "./local_engines.ts";

Deno.test("the local engines serve exactly the advertised voices and languages", async () => {
  const engines = await localEngines();
  try {
    assertEquals([...engines.synthesis.voices].sort(), [...LOCAL_ENGINES.voices].sort());
    assertEquals([...engines.synthesis.languages].sort(), [...LOCAL_ENGINES.tts_languages].sort());
    assertEquals(
      [...engines.recognition.languages].sort(),
      [...LOCAL_ENGINES.stt_languages].sort(),
    );
  } finally {
    await engines.close();
  }
});
