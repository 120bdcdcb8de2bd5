// What Indic Parler-TTS speaks, from its model card (https://huggingface.co/ai4bharat/indic-parler-tts):
// the languages it officially supports and, per language and persona, the speaker it recommends.
import type { SynthesisCatalog } from "../../tts/engine.ts";

/** The languages the model card lists as officially supported. */
export const INDIC_PARLER_LANGUAGES: readonly string[] = [
  "LANGUAGE_AS",
  "LANGUAGE_BN",
  "LANGUAGE_BRX",
  "LANGUAGE_DOI",
  "LANGUAGE_EN",
  "LANGUAGE_GU",
  "LANGUAGE_HI",
  "LANGUAGE_KN",
  "LANGUAGE_KOK",
  "LANGUAGE_MAI",
  "LANGUAGE_ML",
  "LANGUAGE_MNI",
  "LANGUAGE_MR",
  "LANGUAGE_NE",
  "LANGUAGE_OR",
  "LANGUAGE_SA",
  "LANGUAGE_SAT",
  "LANGUAGE_SD",
  "LANGUAGE_TA",
  "LANGUAGE_TE",
  "LANGUAGE_UR",
];

/**
 * Language → persona → speaker, from the model card's speaker table ("Recommended" column;
 * Tamil's second female voice and the English roster's others are left out). The card also
 * names Punjabi speakers (Divjot, Gurpreet) though Punjabi is not officially supported.
 */
export const INDIC_PARLER_CATALOG: SynthesisCatalog = {
  LANGUAGE_AS: { VOICE_ANANYA: "Sita", VOICE_ARJUN: "Amit" },
  LANGUAGE_BN: { VOICE_ANANYA: "Aditi", VOICE_ARJUN: "Arjun" },
  LANGUAGE_BRX: { VOICE_ANANYA: "Maya", VOICE_ARJUN: "Bikram" },
  LANGUAGE_DOI: { VOICE_ARJUN: "Karan" },
  LANGUAGE_EN: { VOICE_ANANYA: "Mary", VOICE_ARJUN: "Thoma" },
  LANGUAGE_GU: { VOICE_ANANYA: "Neha", VOICE_ARJUN: "Yash" },
  LANGUAGE_HI: { VOICE_ANANYA: "Divya", VOICE_ARJUN: "Rohit" },
  LANGUAGE_KN: { VOICE_ANANYA: "Anu", VOICE_ARJUN: "Suresh" },
  LANGUAGE_ML: { VOICE_ANANYA: "Anjali", VOICE_ARJUN: "Harish" },
  LANGUAGE_MNI: { VOICE_ARJUN: "Ranjit" },
  LANGUAGE_MR: { VOICE_ANANYA: "Sunita", VOICE_ARJUN: "Sanjay" },
  LANGUAGE_NE: { VOICE_ANANYA: "Amrita" },
  LANGUAGE_OR: { VOICE_ANANYA: "Debjani", VOICE_ARJUN: "Manas" },
  LANGUAGE_SA: { VOICE_ARJUN: "Aryan" },
  LANGUAGE_TA: { VOICE_ANANYA: "Jaya" },
  LANGUAGE_TE: { VOICE_ANANYA: "Lalitha", VOICE_ARJUN: "Prakash" },
};
