// Both Sarvam legs take their codes from one map: Bulbul's languages are Saaras's, with the same
// codes but for the one the realtime endpoint spells otherwise (Odia).
import { assertEquals } from "../../../tests/helpers/assert.ts";
import { BULBUL_LANGUAGES, SAARAS_LANGUAGE_CODES, SARVAM_LANGUAGE_CODES } from "./languages.ts";

Deno.test("the two Sarvam legs differ only where the realtime recogniser spells a code otherwise", () => {
  assertEquals(BULBUL_LANGUAGES.LANGUAGE_OR, "od-IN");
  assertEquals(SAARAS_LANGUAGE_CODES.LANGUAGE_OR, "or-IN");
  const differ = Object.keys(SARVAM_LANGUAGE_CODES)
    .filter((l) => SAARAS_LANGUAGE_CODES[l] !== SARVAM_LANGUAGE_CODES[l]);
  assertEquals(differ, ["LANGUAGE_OR"]);
  for (const [language, code] of Object.entries(BULBUL_LANGUAGES)) {
    assertEquals(code, SARVAM_LANGUAGE_CODES[language], language);
  }
});
