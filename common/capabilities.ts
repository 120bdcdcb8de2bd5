// What speech engines serve, in the one shape the worker registers with its node row and the API
// reads back: per language, the recognition engines and, per persona, the synthesis engines, each
// list in the worker's routing order (the first is used, the rest are its fallbacks).
// sessions.connect accepts what some live node serves; /api/v1/capabilities reports it.

/** The roster: English and the 22 scheduled languages of India, by proto enum name. */
export const ROSTER_LANGUAGES = [
  "LANGUAGE_EN",
  "LANGUAGE_AS",
  "LANGUAGE_BN",
  "LANGUAGE_BRX",
  "LANGUAGE_DOI",
  "LANGUAGE_GU",
  "LANGUAGE_HI",
  "LANGUAGE_KN",
  "LANGUAGE_KS",
  "LANGUAGE_KOK",
  "LANGUAGE_MAI",
  "LANGUAGE_ML",
  "LANGUAGE_MNI",
  "LANGUAGE_MR",
  "LANGUAGE_NE",
  "LANGUAGE_OR",
  "LANGUAGE_PA",
  "LANGUAGE_SA",
  "LANGUAGE_SAT",
  "LANGUAGE_SD",
  "LANGUAGE_TA",
  "LANGUAGE_TE",
  "LANGUAGE_UR",
] as const;

export const ROSTER_VOICES = ["VOICE_ANANYA", "VOICE_ARJUN"] as const;

export const DEFAULT_VOICE = "VOICE_ANANYA";
export const DEFAULT_LANGUAGE = "LANGUAGE_EN";

/** An engine as the capabilities name it: its registry name and where it runs. */
export interface EngineRef {
  engine: string;
  kind: "local" | "provider";
  /**
   * Set when the engine has no voice of its own for the language and speaks it with the voice of
   * this related language (e.g. Sanskrit through "LANGUAGE_HI"): a related-language fallback, with
   * that language's accent. Absent: a native voice.
   */
  via?: string;
}

/** One language on one node (or merged over nodes). Empty lists are left out. */
export interface ServedLanguage {
  /** Recognition engines, in routing order. */
  stt?: EngineRef[];
  /** Persona → synthesis engines, in routing order. */
  tts?: Record<string, EngineRef[]>;
}

/** Language → what is served in it. */
export type ServeMatrix = Record<string, ServedLanguage>;

/** The flat view sessions.connect checks names against (and older clients read). */
export interface Capabilities {
  voices: string[];
  /** Languages synthesis can speak (tts.language). */
  tts_languages: string[];
  /** Languages recognition can hear (stt.language). */
  stt_languages: string[];
  /** Each live node's matrix: a call is served only where one node serves all its legs. */
  nodes: ServeMatrix[];
  /** The nodes' matrices merged: what is served anywhere, engines in routing order. */
  merged: ServeMatrix;
}

/** The three names a call's speech depends on. */
export interface CallSpeech {
  voice: string;
  ttsLanguage: string;
  sttLanguage: string;
}

/** The speech of a call from its connect config: what is not given is the default. */
export function callSpeech(
  config: { tts?: { voice?: string; language?: string }; stt?: { language?: string } } = {},
): CallSpeech {
  return {
    voice: config.tts?.voice ?? DEFAULT_VOICE,
    ttsLanguage: config.tts?.language ?? DEFAULT_LANGUAGE,
    sttLanguage: config.stt?.language ?? DEFAULT_LANGUAGE,
  };
}

/** Whether one node's matrix serves a call's voice, synthesis language and recognition language. */
export function matrixServes(m: ServeMatrix, call: CallSpeech): boolean {
  return (m[call.sttLanguage]?.stt?.length ?? 0) > 0 &&
    (m[call.ttsLanguage]?.tts?.[call.voice]?.length ?? 0) > 0;
}

/** The union of several nodes' matrices; an engine appears once per list, first position kept. */
export function mergeMatrices(matrices: readonly ServeMatrix[]): ServeMatrix {
  const out: ServeMatrix = {};
  const add = (into: EngineRef[], refs: readonly EngineRef[]) => {
    for (const r of refs) if (!into.some((x) => x.engine === r.engine)) into.push({ ...r });
  };
  for (const m of matrices) {
    for (const [language, served] of Object.entries(m)) {
      const o = out[language] ??= {};
      if (served.stt?.length) add(o.stt ??= [], served.stt);
      for (const [voice, refs] of Object.entries(served.tts ?? {})) {
        if (refs.length) add((o.tts ??= {})[voice] ??= [], refs);
      }
    }
  }
  return out;
}

/** Roster order first, anything else after, each once. */
function inRosterOrder(names: Iterable<string>, roster: readonly string[]): string[] {
  const set = new Set(names);
  return [...roster.filter((n) => set.has(n)), ...[...set].filter((n) => !roster.includes(n))];
}

/** The flat capabilities of a set of live nodes' matrices. */
export function capabilitiesOf(nodes: readonly ServeMatrix[]): Capabilities {
  const merged = mergeMatrices(nodes);
  const entries = Object.entries(merged);
  return {
    voices: inRosterOrder(entries.flatMap(([, s]) => Object.keys(s.tts ?? {})), ROSTER_VOICES),
    tts_languages: inRosterOrder(
      entries.filter(([, s]) => s.tts).map(([l]) => l),
      ROSTER_LANGUAGES,
    ),
    stt_languages: inRosterOrder(
      entries.filter(([, s]) => s.stt).map(([l]) => l),
      ROSTER_LANGUAGES,
    ),
    nodes: [...nodes],
    merged,
  };
}

/**
 * What the local engines serve with nothing configured: espeak-ng in both personas in English and
 * the 15 Indic languages its data has (stack-notes §6), and in the other 7 through a related
 * language's voice (media/tts/related_voice.ts); pocketsphinx en-us for English. A worker
 * registers what its engines really serve; this is the default for nodes registered without a
 * matrix (tests, benches) and is pinned to the engines by a test.
 */
export const LOCAL_SERVES: ServeMatrix = (() => {
  const espeak = { engine: "espeak-ng", kind: "local" } as const;
  const tts = [
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
  ];
  const related: Record<string, string> = {
    LANGUAGE_BRX: "LANGUAGE_HI",
    LANGUAGE_DOI: "LANGUAGE_HI",
    LANGUAGE_KS: "LANGUAGE_UR",
    LANGUAGE_MAI: "LANGUAGE_HI",
    LANGUAGE_MNI: "LANGUAGE_BN",
    LANGUAGE_SA: "LANGUAGE_HI",
    LANGUAGE_SAT: "LANGUAGE_HI",
  };
  const m: ServeMatrix = {};
  for (const l of ROSTER_LANGUAGES) {
    const via = related[l];
    if (!tts.includes(l) && !via) continue;
    const engine = via ? { ...espeak, via } : espeak;
    m[l] = { tts: Object.fromEntries(ROSTER_VOICES.map((v) => [v, [{ ...engine }]])) };
  }
  m.LANGUAGE_EN.stt = [{ engine: "pocketsphinx", kind: "local" }];
  return m;
})();

/** The flat view of the local engines alone. */
export const LOCAL_ENGINES: Capabilities = capabilitiesOf([LOCAL_SERVES]);
