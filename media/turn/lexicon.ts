// What a caller's words say about the turn, per language: only a backchannel ("yeah", "haan ji",
// "aama") or noise, a turn left hanging ("um", "and", "ki"), or a turn that looks complete (a
// question, a yes/no, a number). The words are data (lexicons/<code>.json, in the language's own
// script and in the romanised forms recognisers output); they are imported statically so that
// `deno compile` and `deno check` carry and check them.
import asm from "./lexicons/as.json" with { type: "json" };
import bn from "./lexicons/bn.json" with { type: "json" };
import brx from "./lexicons/brx.json" with { type: "json" };
import doi from "./lexicons/doi.json" with { type: "json" };
import en from "./lexicons/en.json" with { type: "json" };
import gu from "./lexicons/gu.json" with { type: "json" };
import hi from "./lexicons/hi.json" with { type: "json" };
import kn from "./lexicons/kn.json" with { type: "json" };
import kok from "./lexicons/kok.json" with { type: "json" };
import ks from "./lexicons/ks.json" with { type: "json" };
import mai from "./lexicons/mai.json" with { type: "json" };
import ml from "./lexicons/ml.json" with { type: "json" };
import mni from "./lexicons/mni.json" with { type: "json" };
import mr from "./lexicons/mr.json" with { type: "json" };
import ne from "./lexicons/ne.json" with { type: "json" };
import or from "./lexicons/or.json" with { type: "json" };
import pa from "./lexicons/pa.json" with { type: "json" };
import sa from "./lexicons/sa.json" with { type: "json" };
import sat from "./lexicons/sat.json" with { type: "json" };
import sd from "./lexicons/sd.json" with { type: "json" };
import ta from "./lexicons/ta.json" with { type: "json" };
import te from "./lexicons/te.json" with { type: "json" };
import ur from "./lexicons/ur.json" with { type: "json" };

/** A lexicon file as written. */
export interface LexiconData {
  language: string;
  /** Silence windows (ms) before the turn ends, by what the words look like. */
  end_of_turn: { complete_ms: number; neutral_ms: number; hesitant_ms: number };
  /** Said over the bot without taking the floor: "yeah", "haan ji", "aama". */
  backchannels: string[];
  /** Fillers: "um", "matlab". Alone they are a backchannel; at the end, the turn goes on. */
  hesitations: string[];
  /** Words a turn does not end on: "and", "but", "aur", "ki". */
  connectives: string[];
  /** Whole utterances that are a complete answer: "yes", "no", "nahin". */
  complete_phrases: string[];
  /** A turn starting with one of these is a question (English: "what", "can", "is"). */
  question_starts: string[];
  /** A question word anywhere (verb-final languages put it mid-sentence: "aap kahan ho"). */
  question_words: string[];
  /** A turn ending with one of these is complete: "please", "thank you", Hindi "hai". */
  closers: string[];
  /** Number words: a turn ending in a number (or digits) is complete. */
  numbers: string[];
  /**
   * Words that say a phone number is being read out ("mobile", "my number", Hindi "मेरा नंबर";
   * "number" alone is not one: "my order number is 42"): until the digits after them make a whole
   * phone number, the turn goes on.
   */
  phone_words: string[];
  /**
   * Calling phrases ("call me on", Hindi "कॉल करो"): the digits after them are a phone number once
   * they make a first group (PHONE_GROUP_MIN_DIGITS), not a time or a count ("call me at five").
   * Optional: the languages whose callers' phrasing has been written down.
   */
  call_words?: string[];
}

export const LEXICON_DATA: Readonly<Record<string, LexiconData>> = {
  as: asm,
  bn,
  brx,
  doi,
  en,
  gu,
  hi,
  kn,
  kok,
  ks,
  mai,
  ml,
  mni,
  mr,
  ne,
  or,
  pa,
  sa,
  sat,
  sd,
  ta,
  te,
  ur,
};

type Phrase = string[];

class Lexicon {
  readonly backchannel: Phrase[];
  readonly hanging: Phrase[];
  readonly complete: Set<string>;
  readonly questionStarts: Phrase[];
  readonly questionWords: Set<string>;
  readonly closers: Phrase[];
  readonly numbers: Set<string>;
  readonly phoneWords: Phrase[];
  readonly callWords: Phrase[];

  constructor(readonly data: LexiconData) {
    const phrases = (list: string[]) =>
      list.map((p) => tokens(p)).filter((p) => p.length > 0)
        // Longest first, so "theek hai" is matched before "theek".
        .sort((a, b) => b.length - a.length);
    this.backchannel = phrases([...data.backchannels, ...data.hesitations]);
    this.hanging = phrases([...data.hesitations, ...data.connectives]);
    this.complete = new Set(data.complete_phrases.map((p) => tokens(p).join(" ")));
    this.questionStarts = phrases(data.question_starts);
    this.questionWords = new Set(data.question_words.flatMap(tokens));
    this.closers = phrases(data.closers);
    this.numbers = new Set(data.numbers.flatMap(tokens));
    this.phoneWords = phrases(data.phone_words);
    this.callWords = phrases(data.call_words ?? []);
  }
}

const lexicons = new Map<string, Lexicon>();

/** "LANGUAGE_HI", "hi", "hi-IN" → "hi"; unknown languages fall back to English. */
export function languageCode(language: string): string {
  const code = language.replace(/^LANGUAGE_/i, "").split(/[-_]/)[0].toLowerCase();
  return code in LEXICON_DATA ? code : "en";
}

function lexicon(language: string): Lexicon {
  const code = languageCode(language);
  let l = lexicons.get(code);
  if (!l) lexicons.set(code, l = new Lexicon(LEXICON_DATA[code]));
  return l;
}

/**
 * Every word of the language's lexicon (normalised, each list's phrases split into words): what a
 * recogniser must be able to hear for turn-taking to work ("mhm", "uh", "gotcha").
 */
export function lexiconWords(language: string): string[] {
  const d = lexicon(language).data;
  const lists = [
    d.backchannels,
    d.hesitations,
    d.connectives,
    d.complete_phrases,
    d.question_starts,
    d.question_words,
    d.closers,
    d.numbers,
    d.phone_words,
    d.call_words ?? [],
  ];
  return [...new Set(lists.flat().flatMap(tokens))];
}

/** The language's silence windows (lexicon data). */
export function endOfTurnDefaults(language: string): LexiconData["end_of_turn"] {
  return lexicon(language).data.end_of_turn;
}

/**
 * Unicode NFC, lower case, punctuation and math/currency/modifier symbols off, single spaces.
 * Other symbols stay: Sindhi writes "and" as one (۽).
 */
export function normalize(text: string): string {
  return text.normalize("NFC").toLowerCase().replace(/[\p{P}\p{Sm}\p{Sc}\p{Sk}]+/gu, " ")
    .replace(/\s+/g, " ").trim();
}

function tokens(text: string): string[] {
  const n = normalize(text);
  return n ? n.split(" ") : [];
}

function startsWith(words: string[], at: number, p: Phrase): boolean {
  if (at + p.length > words.length) return false;
  for (let i = 0; i < p.length; i++) if (words[at + i] !== p[i]) return false;
  return true;
}

function endsWith(words: string[], p: Phrase): boolean {
  return startsWith(words, words.length - p.length, p) && words.length >= p.length;
}

/**
 * The text is nothing but backchannels and fillers of the language ("yeah", "okay okay",
 * "mm hmm", "haan ji achha"), or nothing at all (a cough the recogniser made no words of).
 */
export function isBackchannel(text: string, language: string): boolean {
  const words = tokens(text);
  const phrases = lexicon(language).backchannel;
  // Each position is covered by some phrase; phrases are few and short, so greedy with
  // backtracking over positions (reachable set) is cheap.
  const reach = new Array<boolean>(words.length + 1).fill(false);
  reach[0] = true;
  for (let at = 0; at < words.length; at++) {
    if (!reach[at]) continue;
    for (const p of phrases) if (startsWith(words, at, p)) reach[at + p.length] = true;
  }
  return reach[words.length];
}

/** The text ends on a filler or a connective: the caller is likely to go on. */
export function endsHesitant(text: string, language: string): boolean {
  const words = tokens(text);
  if (words.length === 0) return false;
  return lexicon(language).hanging.some((p) => endsWith(words, p));
}

/** The text ends on a number ("nine eight four", "4 5 6"). */
export function endsOnNumber(text: string, language: string): boolean {
  const last = tokens(text).at(-1);
  return last !== undefined && (/^\p{Nd}+$/u.test(last) || lexicon(language).numbers.has(last));
}

/**
 * A phone number has ten digits in India (a mobile, or an area code and a landline); with the
 * trunk prefix 0 or the country code 91 it has more, never fewer.
 */
export const PHONE_NUMBER_DIGITS = 10;

/**
 * The digits a phone number's first group has at least after a calling phrase: callers read it in
 * groups of 3-5 (or pairs, "98 45"). Fewer after "call me" is a time or a count ("call me at
 * five"), not held. After a phone word ("my number is") any digit counts.
 */
export const PHONE_GROUP_MIN_DIGITS = 3;

/**
 * The text reads out a phone number short of its digits: a phone word ("my number is", "mobile
 * नंबर"), then only number words or digits to the end, fewer than a phone number has ("nine
 * eight four", "98 45"). Callers read numbers in groups with pauses between; each group ends on a
 * number, which alone would look like a finished turn. A number word counts one digit (numbers
 * are read digit by digit), written digits count as many as they are.
 */
export function readsOutPhoneNumber(text: string, language: string): boolean {
  const words = tokens(text);
  const l = lexicon(language);
  let digits = 0;
  let at = words.length - 1;
  for (; at >= 0; at--) {
    const w = words[at];
    if (/^\p{Nd}+$/u.test(w)) digits += w.length;
    else if (l.numbers.has(w)) digits += 1;
    else break;
  }
  if (digits === 0 || digits >= PHONE_NUMBER_DIGITS) return false;
  const introducers = digits >= PHONE_GROUP_MIN_DIGITS
    ? [...l.phoneWords, ...l.callWords]
    : l.phoneWords;
  // A phone word ends just before the digits, or a word or two before ("my number is", "है").
  const before = words.slice(0, at + 1);
  for (let cut = 0; cut <= 2 && before.length - cut > 0; cut++) {
    const head = before.slice(0, before.length - cut);
    if (introducers.some((p) => endsWith(head, p))) return true;
  }
  return false;
}

/** Sentence-final punctuation of the scripts served (some recognisers punctuate). */
const FINAL_PUNCTUATION = /[?.!।॥؟۔]\s*$/u;

/**
 * The text looks like a finished turn: sentence-final punctuation, a whole short answer ("yes",
 * "nahin"), a question, a closing word ("please", "thank you", Hindi "hai"), or a number at
 * the end ("for two", "4 5 6"). Never when it ends hesitant.
 */
export function looksComplete(text: string, language: string): boolean {
  const words = tokens(text);
  if (words.length === 0 || endsHesitant(text, language)) return false;
  if (FINAL_PUNCTUATION.test(text.normalize("NFC"))) return true;
  const l = lexicon(language);
  if (l.complete.has(words.join(" "))) return true;
  const last = words[words.length - 1];
  if (/^\p{Nd}+$/u.test(last) || l.numbers.has(last)) return true;
  if (l.closers.some((p) => endsWith(words, p))) return true;
  if (words.length >= 2) {
    if (l.questionStarts.some((p) => startsWith(words, 0, p))) return true;
    if (words.some((w) => l.questionWords.has(w))) return true;
  }
  return false;
}
