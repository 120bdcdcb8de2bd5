// docs/languages.md says what the registry serves: it is the file `deno task languages` writes.
import { assertEquals } from "../tests/helpers/assert.ts";
import { formattedLanguagesDoc } from "./languages_doc.ts";

Deno.test("docs/languages.md is the matrix built from the engine registry", async () => {
  const file = await Deno.readTextFile(new URL("../docs/languages.md", import.meta.url));
  assertEquals(
    file,
    await formattedLanguagesDoc(),
    "run `deno task languages` and commit docs/languages.md",
  );
});
