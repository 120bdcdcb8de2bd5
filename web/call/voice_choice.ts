// The voice and language pickers' data: what GET /api/v1/capabilities offers, readable labels
// for its enum names, and the `config` a choice puts in the sessions.connect body.
//
// Synthesis and recognition languages are picked separately (the local engines speak many
// languages but hear only English, so a matched pair would offer English alone); both legs are
// always sent together, as sessions.connect requires.

export interface Capabilities {
  voices: string[];
  tts_languages: string[];
  stt_languages: string[];
  defaults?: { voice?: string; language?: string };
}

export interface VoiceChoice {
  voice: string;
  ttsLanguage: string;
  sttLanguage: string;
}

export async function fetchCapabilities(apiUrl: string): Promise<Capabilities> {
  const res = await fetch(apiUrl.replace(/\/$/, "") + "/api/v1/capabilities");
  if (!res.ok) throw new Error(`capabilities: HTTP ${res.status}`);
  return await res.json();
}

/** The preselected choice: the deployment's defaults where offered, else the first of each list. */
export function defaultChoice(caps: Capabilities): VoiceChoice {
  const pick = (list: string[], wanted?: string) =>
    wanted && list.includes(wanted) ? wanted : list[0] ?? "";
  return {
    voice: pick(caps.voices, caps.defaults?.voice),
    ttsLanguage: pick(caps.tts_languages, caps.defaults?.language),
    sttLanguage: pick(caps.stt_languages, caps.defaults?.language),
  };
}

/** The sessions.connect `config` for a choice. */
export function choiceConfig(c: VoiceChoice) {
  return { tts: { voice: c.voice, language: c.ttsLanguage }, stt: { language: c.sttLanguage } };
}

const LANGUAGE_NAMES: Record<string, string> = {
  EN: "English",
  AS: "Assamese",
  BN: "Bengali",
  GU: "Gujarati",
  HI: "Hindi",
  KN: "Kannada",
  KOK: "Konkani",
  ML: "Malayalam",
  MR: "Marathi",
  NE: "Nepali",
  OR: "Odia",
  PA: "Punjabi",
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
