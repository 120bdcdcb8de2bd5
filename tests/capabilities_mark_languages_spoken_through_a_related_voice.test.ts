// With the local engines alone every roster language is spoken in both personas, and
// /api/v1/capabilities says which of them espeak-ng speaks through a related language's voice
// (and whose), so a customer can route those to a provider instead; connect accepts them.
import { assert, assertEquals } from "./helpers/assert.ts";
import { makeTenant, startTestApi } from "./helpers/api_server.ts";
import { type EngineRef, ROSTER_LANGUAGES, ROSTER_VOICES } from "../common/capabilities.ts";

const RELATED = {
  LANGUAGE_BRX: "LANGUAGE_HI",
  LANGUAGE_DOI: "LANGUAGE_HI",
  LANGUAGE_KS: "LANGUAGE_UR",
  LANGUAGE_MAI: "LANGUAGE_HI",
  LANGUAGE_MNI: "LANGUAGE_BN",
  LANGUAGE_SA: "LANGUAGE_HI",
  LANGUAGE_SAT: "LANGUAGE_HI",
};

Deno.test("local synthesis covers 23 of 23 languages, each marked native or related", async () => {
  const api = await startTestApi(); // one live node, registered with the local engines' matrix
  try {
    const body = await (await fetch(`${api.url}/api/v1/capabilities`)).json();
    assertEquals(body.tts_languages, [...ROSTER_LANGUAGES]);
    const via: Record<string, string> = {};
    for (const language of ROSTER_LANGUAGES) {
      for (const voice of ROSTER_VOICES) {
        const refs: EngineRef[] = body.languages[language].tts[voice];
        assertEquals(refs.map((r) => [r.engine, r.kind]), [["espeak-ng", "local"]]);
        if (refs[0].via) via[language] = refs[0].via;
        else assert(!Object.hasOwn(RELATED, language), `${language} marked native`);
      }
    }
    assertEquals(via, RELATED);

    const acme = await makeTenant(api);
    const santali = await api.post("/api/v1/sessions.connect", {
      agent_id: acme.agent_id,
      config: {
        tts: { voice: "VOICE_ARJUN", language: "LANGUAGE_SAT" },
        stt: { language: "LANGUAGE_EN" },
      },
    }, acme.sk);
    assertEquals(santali.status, 200, JSON.stringify(santali.body));
  } finally {
    await api.close();
  }
});
