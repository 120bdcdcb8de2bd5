// The roster languages espeak-ng has no data for, each spoken by the voice of a related language
// that reads its script (after transliteration where the script differs): intelligible, with the
// related language's accent, and declared as such (`via` in the capabilities and
// docs/languages.md) so a customer can route the language to a provider's native voice instead.
import { SynthesisError } from "./engine.ts";
import { olChikiToDevanagari } from "./transliteration/ol_chiki.ts";
import { type Transliteration, unchanged } from "./transliteration/transliteration.ts";
import { kashmiriForUrdu } from "./transliteration/kashmiri.ts";

export interface RelatedVoice {
  /** The language whose voice speaks this one. */
  via: string;
  /** The script that voice reads. */
  script: string;
  /** Text turned into what the voice reads first; `says` how, for docs/languages.md. */
  transliterates?: { says: string; convert: (text: string) => Transliteration };
  /** A script the language is written in that cannot be spoken here: refused, named. */
  refuses?: { script: string; pattern: RegExp };
}

export const RELATED_VOICES: Readonly<Record<string, RelatedVoice>> = {
  LANGUAGE_SA: { via: "LANGUAGE_HI", script: "Devanagari" },
  LANGUAGE_MAI: { via: "LANGUAGE_HI", script: "Devanagari" },
  LANGUAGE_DOI: { via: "LANGUAGE_HI", script: "Devanagari" },
  LANGUAGE_BRX: { via: "LANGUAGE_HI", script: "Devanagari" },
  // Kashmiri's own vowel letters and marks become their nearest Urdu ones (kashmiri.ts).
  LANGUAGE_KS: {
    via: "LANGUAGE_UR",
    script: "Perso-Arabic",
    transliterates: {
      says:
        "Kashmiri's own vowel letters become the nearest Urdu ones, its extra vowel marks dropped",
      convert: kashmiriForUrdu,
    },
  },
  // sanscript's `manipuri` scheme was tried: it leaves the eight final (lonsum) letters in
  // Meetei Mayek and reads LAI as a nukta letter, so Meetei Mayek is refused, not half-spoken.
  LANGUAGE_MNI: {
    via: "LANGUAGE_BN",
    script: "Bengali",
    refuses: { script: "Meetei Mayek", pattern: /[\uABC0-\uABFF\uAAE0-\uAAFF]/ },
  },
  LANGUAGE_SAT: {
    via: "LANGUAGE_HI",
    script: "Devanagari",
    transliterates: {
      says: "Ol Chiki is transliterated to Devanagari letter by letter",
      convert: olChikiToDevanagari,
    },
  },
};

/** Text in a script this engine cannot speak for the language (the router may try the next). */
export class UnspokenScriptError extends SynthesisError {
  constructor(readonly language: string, readonly script: string, readonly speaks: string) {
    super(
      `${language} text in ${script} script cannot be spoken locally (espeak-ng speaks ` +
        `${language} in ${speaks} script only); send ${speaks}, or route ${language} to a provider`,
    );
    this.name = "UnspokenScriptError";
  }
}

/** What the related voice reads for `text` in `language`; throws UnspokenScriptError. */
export function forRelatedVoice(language: string, text: string): Transliteration {
  const related = RELATED_VOICES[language];
  if (related.refuses?.pattern.test(text)) {
    throw new UnspokenScriptError(language, related.refuses.script, related.script);
  }
  return related.transliterates ? related.transliterates.convert(text) : unchanged(text);
}
