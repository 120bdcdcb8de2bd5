// Proto language → Sarvam's language code, for both legs (Saaras recognition, Bulbul synthesis):
// one map, as Pipecat's services/sarvam/ and LiveKit's plugins/sarvam models.ts keep theirs, with
// what each model serves declared against it.
//
// Saaras v3/v4 "support the same 22 Indian languages" plus en-IN
// (https://docs.sarvam.ai/api/api-guides-tutorials/speech-to-text/how-to/specify-language-codes):
// every Indic language of our roster. Bulbul v3 speaks 10 Indic languages and Indian English
// (https://docs.sarvam.ai/api-reference-docs/getting-started/models/bulbul).
//
// Odia: the language-code pages say `od-IN` (Bulbul takes it), but clients of Saaras's realtime
// endpoint use `or-IN` there (Pipecat's realtime adapter maps Odia to or-IN and refuses od-IN);
// the realtime pages we could read do not settle it. One line to change if it is wrong.

/** Every language Sarvam has a code for, with the code its docs give. */
export const SARVAM_LANGUAGE_CODES: Readonly<Record<string, string>> = {
  LANGUAGE_EN: "en-IN",
  LANGUAGE_AS: "as-IN",
  LANGUAGE_BN: "bn-IN",
  LANGUAGE_BRX: "brx-IN",
  LANGUAGE_DOI: "doi-IN",
  LANGUAGE_GU: "gu-IN",
  LANGUAGE_HI: "hi-IN",
  LANGUAGE_KN: "kn-IN",
  LANGUAGE_KS: "ks-IN",
  LANGUAGE_KOK: "kok-IN",
  LANGUAGE_MAI: "mai-IN",
  LANGUAGE_ML: "ml-IN",
  LANGUAGE_MNI: "mni-IN",
  LANGUAGE_MR: "mr-IN",
  LANGUAGE_NE: "ne-IN",
  LANGUAGE_OR: "od-IN",
  LANGUAGE_PA: "pa-IN",
  LANGUAGE_SA: "sa-IN",
  LANGUAGE_SAT: "sat-IN",
  LANGUAGE_SD: "sd-IN",
  LANGUAGE_TA: "ta-IN",
  LANGUAGE_TE: "te-IN",
  LANGUAGE_UR: "ur-IN",
};

/** Where Saaras's realtime endpoint takes another code than the docs' (see above). */
const SAARAS_REALTIME_CODES: Readonly<Record<string, string>> = { LANGUAGE_OR: "or-IN" };

/** Proto language → the code Saaras's realtime session takes: every language of the map. */
export const SAARAS_LANGUAGE_CODES: Readonly<Record<string, string>> = {
  ...SARVAM_LANGUAGE_CODES,
  ...SAARAS_REALTIME_CODES,
};

/** Proto names of the languages Saaras recognises. */
export const SARVAM_STT_LANGUAGES: readonly string[] = Object.keys(SAARAS_LANGUAGE_CODES);

/** Proto language → Bulbul's code: the 10 Indic languages and Indian English it speaks. */
export const BULBUL_LANGUAGES: Readonly<Record<string, string>> = Object.fromEntries(
  [
    "LANGUAGE_EN",
    "LANGUAGE_BN",
    "LANGUAGE_GU",
    "LANGUAGE_HI",
    "LANGUAGE_KN",
    "LANGUAGE_ML",
    "LANGUAGE_MR",
    "LANGUAGE_OR",
    "LANGUAGE_PA",
    "LANGUAGE_TA",
    "LANGUAGE_TE",
  ].map((l) => [l, SARVAM_LANGUAGE_CODES[l]]),
);
