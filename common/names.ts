// Readable names of the roster's enum names, for the demo page and the console.

/** English and the 22 scheduled languages of India (the roster), by enum suffix. */
export const LANGUAGE_NAMES: Record<string, string> = {
  EN: "English",
  AS: "Assamese",
  BN: "Bengali",
  BRX: "Bodo",
  DOI: "Dogri",
  GU: "Gujarati",
  HI: "Hindi",
  KN: "Kannada",
  KS: "Kashmiri",
  KOK: "Konkani",
  MAI: "Maithili",
  ML: "Malayalam",
  MNI: "Manipuri",
  MR: "Marathi",
  NE: "Nepali",
  OR: "Odia",
  PA: "Punjabi",
  SA: "Sanskrit",
  SAT: "Santali",
  SD: "Sindhi",
  TA: "Tamil",
  TE: "Telugu",
  UR: "Urdu",
};

/** "LANGUAGE_HI" → "Hindi"; "VOICE_ANANYA" → "Ananya"; unknown names are shown as they are. */
export function label(name: string): string {
  const lang = /^LANGUAGE_(.+)$/.exec(name);
  if (lang) return LANGUAGE_NAMES[lang[1]] ?? lang[1];
  const voice = /^VOICE_(.+)$/.exec(name);
  if (voice) return voice[1].charAt(0) + voice[1].slice(1).toLowerCase();
  return name;
}
