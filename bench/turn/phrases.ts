// What the turn-taking bench's callers say: per language, turns made of phrases with the pauses
// between them left open (the data builder chooses them), and backchannels taken from the
// project's own lexicons (media/turn/lexicons). Turns are written by hand for English and the
// default Indic set (Hindi, Tamil, Telugu, Bengali); the other languages espeak-ng speaks get
// turns built from their lexicon's words (number words, fillers, connectives, closers): word
// strings rather than sentences, so their figures say less (docs/turn-taking.md).
import { LEXICON_DATA } from "../../media/turn/lexicon.ts";

export interface Voice {
  engine: "festival" | "espeak";
  /** espeak-ng voice (with variant); festival: its default voice ("kal"). */
  name: string;
  /** espeak-ng words per minute; festival: Duration_Stretch. */
  rate: number;
}

/** What a turn is made to test. */
export type TurnKind =
  | "complete" // one phrase, no pause: only the wait matters
  | "hesitation" // a filler, then a pause, then the rest
  | "connective" // cut at a trailing connective ("and", "aur"), then the rest
  | "list" // items with pauses between them
  | "numbers" // a phone number read out in groups
  | "pause"; // a pause mid-sentence with no filler

/** A turn: its phrases, with a pause (chosen by the builder) between each two. */
export interface TurnScript {
  kind: TurnKind;
  phrases: string[];
}

export interface LanguageScripts {
  code: string;
  voices: Voice[];
  turns: TurnScript[];
  /** Said over the bot: they must not interrupt it. */
  backchannels: string[];
  /** Said over the bot: they must interrupt it (the control for the backchannels). */
  bargeIns: string[];
  /** Hand-written sentences (true) or lexicon word strings (false). */
  written: boolean;
}

const t = (kind: TurnKind, ...phrases: string[]): TurnScript => ({ kind, phrases });

const WRITTEN: Record<
  string,
  Omit<LanguageScripts, "code" | "voices" | "backchannels" | "written">
> = {
  en: {
    turns: [
      t("complete", "what time does the office open tomorrow"),
      t("complete", "yes that works for me thank you"),
      t("hesitation", "I need to change my um", "my delivery address please"),
      t("connective", "I would like to book a table for two and", "could it be near the window"),
      t("list", "I need milk", "bread", "and some eggs please"),
      t("numbers", "my number is nine eight four", "five two one", "two three four seven"),
      t("pause", "I was thinking we could", "meet on Friday instead"),
    ],
    bargeIns: ["wait I have a question about my bill", "no stop that is not what I asked"],
  },
  hi: {
    turns: [
      t("complete", "आपका ऑफिस कब खुलता है"),
      t("complete", "हाँ यह ठीक है धन्यवाद"),
      t("hesitation", "मेरा नाम उम", "राहुल शर्मा है"),
      t("connective", "मुझे दो लोगों के लिए टेबल चाहिए और", "खिड़की के पास बैठना है"),
      t("list", "मुझे दूध", "ब्रेड", "और अंडे चाहिए"),
      t("numbers", "मेरा नंबर नौ आठ चार", "पाँच दो एक", "दो तीन चार सात"),
      t("pause", "मैं कल सुबह", "दस बजे आऊँगा"),
    ],
    bargeIns: ["रुकिए मुझे अपने बिल के बारे में पूछना है", "नहीं नहीं मैंने यह नहीं पूछा था"],
  },
  ta: {
    turns: [
      t("complete", "உங்கள் அலுவலகம் எப்போது திறக்கும்"),
      t("complete", "சரி அது பரவாயில்லை நன்றி"),
      t("hesitation", "என் பெயர் அதாவது", "ராஜேஷ் குமார்"),
      t("connective", "எனக்கு இரண்டு பேருக்கு ஒரு டேபிள் வேணும் அப்புறம்", "ஜன்னல் பக்கத்தில் வேணும்"),
      t("list", "எனக்கு பால்", "ரொட்டி", "மற்றும் முட்டை வேணும்"),
      t("numbers", "என் நம்பர் ஒன்பது எட்டு நாலு", "அஞ்சு ரெண்டு ஒண்ணு", "ரெண்டு மூணு நாலு ஏழு"),
      t("pause", "நான் நாளைக்கு காலையில்", "பத்து மணிக்கு வருவேன்"),
    ],
    bargeIns: ["நிறுத்துங்க என் பில் பற்றி ஒரு கேள்வி", "இல்லை நான் அதை கேட்கவில்லை"],
  },
  te: {
    turns: [
      t("complete", "మీ ఆఫీసు ఎప్పుడు తెరుస్తారు"),
      t("complete", "సరే అది బాగుంది ధన్యవాదాలు"),
      t("hesitation", "నా పేరు అంటే", "రమేష్ రెడ్డి"),
      t("connective", "నాకు ఇద్దరికి ఒక టేబుల్ కావాలి మరియు", "కిటికీ దగ్గర కావాలి"),
      t("list", "నాకు పాలు", "రొట్టె", "మరియు గుడ్లు కావాలి"),
      t("numbers", "నా నంబర్ తొమ్మిది ఎనిమిది నాలుగు", "ఐదు రెండు ఒకటి", "రెండు మూడు నాలుగు ఏడు"),
      t("pause", "నేను రేపు ఉదయం", "పది గంటలకు వస్తాను"),
    ],
    bargeIns: ["ఆగండి నా బిల్లు గురించి ఒక ప్రశ్న ఉంది", "లేదు నేను అది అడగలేదు"],
  },
  bn: {
    turns: [
      t("complete", "আপনার অফিস কখন খোলে"),
      t("complete", "ঠিক আছে ধন্যবাদ"),
      t("hesitation", "আমার নাম মানে", "রাহুল দাস"),
      t("connective", "আমার দুজনের জন্য একটা টেবিল চাই আর", "জানালার পাশে বসতে চাই"),
      t("list", "আমার দুধ", "রুটি", "আর ডিম চাই"),
      t("numbers", "আমার নম্বর নয় আট চার", "পাঁচ দুই এক", "দুই তিন চার সাত"),
      t("pause", "আমি কাল সকালে", "দশটায় আসব"),
    ],
    bargeIns: ["দাঁড়ান আমার বিল নিয়ে একটা প্রশ্ন আছে", "না না আমি এটা জিজ্ঞেস করিনি"],
  },
};

/**
 * Roster languages espeak-ng has a voice for (`espeak-ng --voices`); the roster's others (Bodo,
 * Dogri, Kashmiri, Maithili, Manipuri, Sanskrit, Santali) it cannot speak, so they are not here.
 */
export const ESPEAK_ROSTER = [
  "en",
  "hi",
  "ta",
  "te",
  "bn",
  "as",
  "gu",
  "kn",
  "kok",
  "ml",
  "mr",
  "ne",
  "or",
  "pa",
  "sd",
  "ur",
] as const;
export const NOT_SPOKEN = ["brx", "doi", "ks", "mai", "mni", "sa", "sat"];
export const DEFAULT_LANGUAGES = ["en", "hi", "ta", "te", "bn"];

/** The lexicon's entries in the language's own script (espeak-ng reads Latin as English). */
function native(list: string[], code: string): string[] {
  return code === "en" ? list : list.filter((w) => !/[A-Za-z]/.test(w));
}

function voicesOf(code: string): Voice[] {
  if (code === "en") {
    return [
      { engine: "festival", name: "kal", rate: 1 },
      { engine: "espeak", name: "en-us+m3", rate: 165 },
      { engine: "espeak", name: "en-gb+f3", rate: 175 },
    ];
  }
  return [{ engine: "espeak", name: code, rate: 150 }, {
    engine: "espeak",
    name: `${code}+f3`,
    rate: 170,
  }];
}

/** Turns from the lexicon's words, for languages with no hand-written sentences. */
function lexiconTurns(code: string): { turns: TurnScript[]; bargeIns: string[] } {
  const d = LEXICON_DATA[code];
  const n = native(d.numbers, code);
  const num = (i: number) => n[i % n.length];
  const group = (from: number, count: number) =>
    Array.from({ length: count }, (_, i) => num(from + i)).join(" ");
  const [hes] = native(d.hesitations, code);
  const [con] = native(d.connectives, code);
  const [closer] = native(d.closers, code);
  const [yes] = native(d.complete_phrases, code);
  const [q] = native(d.question_words, code);
  return {
    turns: [
      t("complete", `${q} ${group(0, 2)} ${closer}`),
      t("complete", `${yes} ${closer}`),
      t("hesitation", `${group(0, 2)} ${hes}`, `${group(2, 2)} ${closer}`),
      t("connective", `${group(1, 3)} ${con}`, `${group(4, 2)} ${closer}`),
      t("list", group(0, 1), group(1, 1), `${con} ${group(2, 1)} ${closer}`),
      t("numbers", group(0, 3), group(3, 3), group(6, 4)),
      t("pause", group(2, 3), `${group(5, 2)} ${closer}`),
    ],
    bargeIns: [`${group(0, 3)} ${q} ${group(3, 3)} ${closer}`],
  };
}

/** Up to `max` backchannels of the lexicon (Infinity: every one), in the native script. */
export function backchannelsOf(code: string, max = 6): string[] {
  const d = LEXICON_DATA[code];
  const words = native(d.backchannels, code);
  if (max === Infinity) return [...new Set(words.map((w) => w.normalize("NFC")))];
  // English: the ones callers say most, incl. "mm hmm" and "uh huh" (two bursts).
  if (code === "en") return ["yeah", "okay", "mm hmm", "uh huh", "right", "i see"].slice(0, max);
  // Spread over the list, which groups spellings of one word ("हाँ", "हां") together.
  const step = Math.max(1, Math.floor(words.length / max));
  return words.filter((_, i) => i % step === 0).slice(0, max);
}

export function scriptsFor(code: string): LanguageScripts {
  if (!(ESPEAK_ROSTER as readonly string[]).includes(code)) {
    throw new Error(
      `no voice speaks ${code} here: choose from ${ESPEAK_ROSTER.join(" ")} ` +
        `(espeak-ng has none for ${NOT_SPOKEN.join(" ")})`,
    );
  }
  const written = WRITTEN[code];
  const body = written ?? lexiconTurns(code);
  return {
    code,
    voices: voicesOf(code),
    turns: body.turns,
    backchannels: backchannelsOf(code),
    bargeIns: body.bargeIns,
    written: written !== undefined,
  };
}
