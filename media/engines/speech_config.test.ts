// A worker's speech config: local engines alone by default, providers when their credentials are
// in the environment, and a config file that names what runs and routes languages, checked before
// anything starts.
import { assertEquals, assertThrows } from "../../tests/helpers/assert.ts";
import { defaultSpeechConfig, parseSpeechConfig, SpeechConfigError } from "./speech_config.ts";

const noEnv = () => undefined;

Deno.test("with nothing configured a worker runs the local engines", () => {
  assertEquals(parseSpeechConfig({}, noEnv), {
    recognition: ["pocketsphinx"],
    synthesis: ["espeak-ng"],
    routes: {},
    options: {},
  });
});

Deno.test("providers whose credentials are set come first, the local engines stay as fallback", () => {
  const env = (n: string) => ({ SARVAM_API_KEY: "k", INDIC_PARLER_URL: "http://x" })[n];
  const c = defaultSpeechConfig(env);
  assertEquals(c.recognition, ["sarvam-saaras", "pocketsphinx"]);
  assertEquals(c.synthesis, ["sarvam-bulbul", "indic-parler", "espeak-ng"]);
});

Deno.test("a speech config names engines and routes, and is checked whole", async (t) => {
  await t.step("routes per language and a default route", () => {
    const c = parseSpeechConfig({
      recognition: ["pocketsphinx"],
      synthesis: ["espeak-ng"],
      routes: { synthesis: { "*": ["espeak-ng"] }, recognition: { LANGUAGE_EN: ["pocketsphinx"] } },
      options: { "espeak-ng": { threads: 1 } },
    }, noEnv);
    assertEquals(c.routes.recognition, { LANGUAGE_EN: ["pocketsphinx"] });
    assertEquals(c.options, { "espeak-ng": { threads: 1 } });
  });
  const refused = (json: unknown, message: RegExp) => {
    const err = assertThrows(() => parseSpeechConfig(json, noEnv), SpeechConfigError);
    if (!message.test(err.message)) throw new Error(`"${err.message}" does not match ${message}`);
  };
  await t.step(
    "an unknown engine",
    () => refused({ synthesis: ["nope"] }, /unknown engine "nope"/),
  );
  await t.step(
    "an engine on the wrong leg",
    () => refused({ recognition: ["espeak-ng"] }, /"espeak-ng" is a synthesis engine/),
  );
  await t.step("a route through an engine that does not run", () =>
    refused(
      { synthesis: ["espeak-ng"], routes: { synthesis: { "*": ["sarvam-bulbul", "espeak-ng"] } } },
      /routes.synthesis.\*: "sarvam-bulbul" is not in synthesis/,
    ));
  await t.step(
    "a route keyed by something else than a language",
    () => refused({ routes: { synthesis: { hindi: ["espeak-ng"] } } }, /keyed by a language/),
  );
  await t.step(
    "a credential in the file",
    () => refused({ options: { "espeak-ng": { api_key: "x" } } }, /from the environment/),
  );
  await t.step("an unknown field", () => refused({ engines: [] }, /unknown field "engines"/));
});
