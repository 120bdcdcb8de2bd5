// What the configured speech engines serve. sessions.connect accepts exactly these names and
// /api/v1/capabilities reports them.
export interface Capabilities {
  voices: string[];
  /** Languages synthesis can speak (tts.language). */
  tts_languages: string[];
  /** Languages recognition can hear (stt.language). */
  stt_languages: string[];
}

export const DEFAULT_VOICE = "VOICE_ANANYA";
export const DEFAULT_LANGUAGE = "LANGUAGE_EN";

/**
 * The local engines: espeak-ng (both personas; English and the Indic languages its data has,
 * stack-notes §6) and pocketsphinx with the en-us model (English only).
 */
export const LOCAL_ENGINES: Capabilities = {
  voices: ["VOICE_ANANYA", "VOICE_ARJUN"],
  tts_languages: [
    "LANGUAGE_EN",
    "LANGUAGE_AS",
    "LANGUAGE_BN",
    "LANGUAGE_GU",
    "LANGUAGE_HI",
    "LANGUAGE_KN",
    "LANGUAGE_KOK",
    "LANGUAGE_ML",
    "LANGUAGE_MR",
    "LANGUAGE_NE",
    "LANGUAGE_OR",
    "LANGUAGE_PA",
    "LANGUAGE_SD",
    "LANGUAGE_TA",
    "LANGUAGE_TE",
    "LANGUAGE_UR",
  ],
  stt_languages: ["LANGUAGE_EN"],
};
