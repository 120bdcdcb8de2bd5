// The voice and language pickers' data: what GET /api/v1/capabilities offers, readable labels
// for its enum names, and the `config` a choice puts in the sessions.connect body.
//
// Synthesis and recognition languages are picked separately (the local engines speak many
// languages but hear only English, so a matched pair would offer English alone); both legs are
// always sent together, as sessions.connect requires. The voice follows the speaking language:
// a persona is offered only where some engine speaks that language in it. APIs older than the
// per-language matrix (no `languages`) get the three flat lists, unlinked.
import type { EngineRef, ServedLanguage } from "../../common/capabilities.ts";
import { label } from "../../common/names.ts";

export { label };

export interface Capabilities {
  voices: string[];
  tts_languages: string[];
  stt_languages: string[];
  defaults?: { voice?: string; language?: string };
  /** Per language, each leg's engines in routing order; absent from older APIs. */
  languages?: Record<string, ServedLanguage>;
}

export interface VoiceChoice {
  voice: string;
  ttsLanguage: string;
  sttLanguage: string;
}

/** One option of a picker: the enum name sent to the API and the text the page shows. */
export interface PickerOption {
  value: string;
  label: string;
}

export interface PickerOptions {
  voice: PickerOption[];
  tts: PickerOption[];
  stt: PickerOption[];
}

export async function fetchCapabilities(apiUrl: string): Promise<Capabilities> {
  const res = await fetch(apiUrl.replace(/\/$/, "") + "/api/v1/capabilities");
  if (!res.ok) throw new Error(`capabilities: HTTP ${res.status}`);
  return await res.json();
}

const pick = (list: string[], wanted?: string) =>
  wanted && list.includes(wanted) ? wanted : list[0] ?? "";

/** Languages some engine speaks (in any persona). */
export function ttsLanguages(caps: Capabilities): string[] {
  if (!caps.languages) return caps.tts_languages;
  return Object.entries(caps.languages)
    .filter(([, s]) => Object.values(s.tts ?? {}).some((refs) => refs.length > 0))
    .map(([l]) => l);
}

/** Languages some engine recognises. */
export function sttLanguages(caps: Capabilities): string[] {
  if (!caps.languages) return caps.stt_languages;
  return Object.entries(caps.languages).filter(([, s]) => s.stt?.length).map(([l]) => l);
}

/** The personas spoken in `ttsLanguage`, in the order of the flat voice list. */
export function voicesIn(caps: Capabilities, ttsLanguage: string): string[] {
  if (!caps.languages) return caps.voices;
  const tts = caps.languages[ttsLanguage]?.tts ?? {};
  const served = Object.keys(tts).filter((v) => tts[v].length > 0);
  const known = caps.voices.filter((v) => served.includes(v));
  return [...known, ...served.filter((v) => !known.includes(v))];
}

/** The voice to use in `ttsLanguage`: `wanted` if spoken there, else the default, else the first. */
export function voiceFor(caps: Capabilities, ttsLanguage: string, wanted?: string): string {
  const voices = voicesIn(caps, ttsLanguage);
  return wanted && voices.includes(wanted) ? wanted : pick(voices, caps.defaults?.voice);
}

/** The preselected choice: the deployment's defaults where offered, else the first of each list. */
export function defaultChoice(caps: Capabilities): VoiceChoice {
  const ttsLanguage = pick(ttsLanguages(caps), caps.defaults?.language);
  return {
    voice: voiceFor(caps, ttsLanguage, caps.defaults?.voice),
    ttsLanguage,
    sttLanguage: pick(sttLanguages(caps), caps.defaults?.language),
  };
}

/**
 * The choice after the caller changed a picker: each part kept where still offered, the voice
 * moved to one the speaking language has when it lacks the chosen one.
 */
export function settleChoice(caps: Capabilities, wanted: VoiceChoice): VoiceChoice {
  const fallback = defaultChoice(caps);
  const tts = ttsLanguages(caps);
  const ttsLanguage = tts.includes(wanted.ttsLanguage) ? wanted.ttsLanguage : fallback.ttsLanguage;
  const stt = sttLanguages(caps);
  return {
    voice: voiceFor(caps, ttsLanguage, wanted.voice),
    ttsLanguage,
    sttLanguage: stt.includes(wanted.sttLanguage) ? wanted.sttLanguage : fallback.sttLanguage,
  };
}

/** "Hindi — sarvam-bulbul (provider)": the name and the engine that serves (not its fallbacks). */
function withEngine(language: string, refs: EngineRef[] | undefined): string {
  const first = refs?.[0];
  return first ? `${label(language)} — ${first.engine} (${first.kind})` : label(language);
}

/**
 * What each picker offers around `choice`. A speaking language is labelled with the engine that
 * would speak it in the voice the caller would get there (the chosen one where it is spoken), so
 * the labels change with the voice.
 */
export function pickerOptions(caps: Capabilities, choice: VoiceChoice): PickerOptions {
  const served = caps.languages;
  return {
    voice: voicesIn(caps, choice.ttsLanguage).map((v) => ({ value: v, label: label(v) })),
    tts: ttsLanguages(caps).map((l) => ({
      value: l,
      label: served ? withEngine(l, served[l]?.tts?.[voiceFor(caps, l, choice.voice)]) : label(l),
    })),
    stt: sttLanguages(caps).map((l) => ({
      value: l,
      label: served ? withEngine(l, served[l]?.stt) : label(l),
    })),
  };
}

/** The sessions.connect `config` for a choice. */
export function choiceConfig(c: VoiceChoice) {
  return { tts: { voice: c.voice, language: c.ttsLanguage }, stt: { language: c.sttLanguage } };
}
