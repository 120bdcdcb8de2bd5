// Redaction of what a customer must not keep (issue 37): card and account numbers, phone numbers,
// e-mail addresses, Aadhaar and PAN, written or spoken as a recogniser writes them (numerals of
// any Indian script, English and Hindi digit words). Each match becomes a typed placeholder such
// as `[card]`, whole, never partly. Pure and synchronous: the worker runs it on every text before
// it is kept, and webhooks (built from the record) may call it too. Hand-written because no
// maintained library knows spoken Indian digits, Aadhaar's Verhoeff check or UPI ids.
// What each category matches and misses: docs/redaction.md.

export const CATEGORIES = [
  "card",
  "account",
  "phone",
  "email",
  "aadhaar",
  "pan",
  "keypad",
] as const;
export type Category = typeof CATEGORIES[number];

/** What a redacted key press is written as (media/call/key_presses.ts uses it too). */
export const MASKED_DIGIT = "*";

/** The categories an agent redacts; empty (the default) redacts nothing. */
export type RedactionPolicy = ReadonlySet<Category>;

export const NO_REDACTION: RedactionPolicy = new Set();

/** Every category: used when an agent's policy could not be read (fail closed). */
export const REDACT_ALL: RedactionPolicy = new Set(CATEGORIES);

/** A policy from a list of names; an unknown name is an error that names it. */
export function policyOf(names: readonly string[]): RedactionPolicy {
  const out = new Set<Category>();
  for (const n of names) {
    if (!(CATEGORIES as readonly string[]).includes(n)) {
      throw new RangeError(`unknown redaction category "${n}" (known: ${CATEGORIES.join(", ")})`);
    }
    out.add(n as Category);
  }
  return out;
}

/** Luhn (ISO/IEC 7812) check over a digit string. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return digits.length > 0 && sum % 10 === 0;
}

const VERHOEFF_D = [
  "0123456789",
  "1234067895",
  "2340178956",
  "3401289567",
  "4012395678",
  "5987604321",
  "6598710432",
  "7659821043",
  "8765932104",
  "9876543210",
].map((r) => [...r].map(Number));
const VERHOEFF_P = [
  "0123456789",
  "1576283094",
  "5803796142",
  "8916043527",
  "9453126870",
  "4286573901",
  "2793806415",
  "7046913258",
].map((r) => [...r].map(Number));

/** Verhoeff check (Aadhaar's check digit) over a digit string. */
export function verhoeffValid(digits: string): boolean {
  let c = 0;
  for (let i = 0; i < digits.length; i++) {
    c = VERHOEFF_D[c][VERHOEFF_P[i % 8][digits.charCodeAt(digits.length - 1 - i) - 48]];
  }
  return digits.length > 0 && c === 0;
}

/** The zero of each script's decimal digits a recogniser may write (Devanagari, Bengali, ...). */
const DIGIT_ZEROS = [
  0x30,
  0x660,
  0x6f0,
  0x966,
  0x9e6,
  0xa66,
  0xae6,
  0xb66,
  0xbe6,
  0xc66,
  0xce6,
  0xd66,
  0x1c50,
  0xabf0,
];

function digitValue(ch: string): string {
  const cp = ch.codePointAt(0)!;
  for (const z of DIGIT_ZEROS) if (cp >= z && cp <= z + 9) return String(cp - z);
  return ""; // another script's digit: not one of ours, so it breaks nothing and counts nothing
}

/** Spoken digits as recognisers write them: English, Hindi in Devanagari and romanised. */
const DIGIT_WORDS: Record<string, string> = {};
for (
  const [d, words] of [
    ["0", "zero oh nought shunya shunya sifar zeero जीरो ज़ीरो शून्य"],
    ["1", "one ek एक"],
    ["2", "two do दो"],
    ["3", "three teen तीन"],
    ["4", "four char chaar चार"],
    ["5", "five paanch panch पांच पाँच"],
    ["6", "six chhe chhah che छह छः छे"],
    ["7", "seven saat सात"],
    ["8", "eight aath आठ"],
    ["9", "nine nau नौ"],
  ] as const
) for (const w of words.split(" ")) DIGIT_WORDS[w] = d;
const REPEATS: Record<string, number> = { double: 2, triple: 3, डबल: 2, ट्रिपल: 3 };

/** One run of digits as written or spoken, with where it sits in the text. */
interface Group {
  digits: string;
  start: number;
  end: number;
  /** Written against a letter ("ORD-1234", "12th"): part of an id, so only a card is taken. */
  stuck: boolean;
}

const TOKEN = /(\p{Nd}+)|([\p{L}\p{M}]+)|([\s\u00a0]+|[-\u2010-\u2013])|(\+)|[^]/gu;
const LETTER_BEFORE = /[\p{L}\p{M}][-\u2010-\u2013]?$/u;
const LETTER_AFTER = /^[\p{L}\p{M}]/u;

/** Chains of digit groups (numerals, digit words) joined only by spaces or dashes. */
function chains(text: string): { groups: Group[]; plus: boolean }[] {
  const out: { groups: Group[]; plus: boolean }[] = [];
  let cur: Group[] = [];
  let plus = false, pendingPlus = false, repeat = 1, repeatAt = -1;
  const close = () => {
    if (cur.length) out.push({ groups: cur, plus });
    cur = [];
    plus = false;
    repeat = 1;
    repeatAt = -1;
  };
  const push = (digits: string, start: number, end: number, stuck: boolean) => {
    if (!cur.length) plus = pendingPlus;
    // "double five" repeats one spoken digit, never a written number ("double 4532...").
    const repeats = !stuck && digits.length === 1;
    const from = repeatAt < 0 || !repeats ? start : repeatAt;
    cur.push({ digits: repeats ? digits.repeat(repeat) : digits, start: from, end, stuck });
    repeat = 1;
    repeatAt = -1;
  };
  for (const m of text.matchAll(TOKEN)) {
    const [tok, numeral, word, sep, sign] = m;
    const start = m.index, end = start + tok.length;
    if (numeral !== undefined) {
      let digits = "";
      for (const ch of numeral) digits += digitValue(ch);
      if (digits.length !== [...numeral].length) close(); // another script's digits: not ours
      else {
        const stuck = LETTER_AFTER.test(text.slice(end, end + 1)) ||
          LETTER_BEFORE.test(text.slice(Math.max(0, start - 2), start));
        push(digits, start, end, stuck);
      }
    } else if (word !== undefined) {
      const w = word.toLowerCase();
      if (DIGIT_WORDS[w] !== undefined) push(DIGIT_WORDS[w], start, end, false);
      else if (REPEATS[w] !== undefined) {
        repeat = REPEATS[w];
        repeatAt = start;
      } else close();
    } else if (sep !== undefined) {
      continue; // keeps the chain and a pending "+"
    } else if (sign !== undefined) {
      close();
      pendingPlus = true;
      continue;
    } else close();
    pendingPlus = false;
  }
  close();
  return out;
}

/** Longest digit run one match may span: a card's 19. */
const LONGEST = 19;

/** What a run of digits is, for the enabled categories; undefined when none. */
function classify(d: string, plus: boolean, policy: RedactionPolicy): Category | undefined {
  const n = d.length;
  if (policy.has("card") && n >= 13 && n <= 19 && luhnValid(d)) return "card";
  if (policy.has("aadhaar") && n === 12 && /^[2-9]/.test(d) && verhoeffValid(d)) return "aadhaar";
  if (policy.has("phone")) {
    if (plus && n >= 8 && n <= 15 && d[0] !== "0") return "phone"; // E.164
    if (n === 10 && /^[6-9]/.test(d)) return "phone"; // an Indian mobile
    if (n === 11 && /^0[1-9]/.test(d)) return "phone"; // a trunk prefix: a mobile or landline
    if (n === 12 && /^91[6-9]/.test(d)) return "phone"; // 91 without the plus
  }
  if (policy.has("account") && n >= 9 && n <= 18) return "account";
  return undefined;
}

interface Cut {
  start: number;
  end: number;
  category: Category;
}

/** The digit runs to replace: within each chain, the longest match from each group on. */
function digitCuts(text: string, policy: RedactionPolicy): Cut[] {
  const cuts: Cut[] = [];
  const cardOnly: RedactionPolicy = policy.has("card") ? new Set(["card"]) : NO_REDACTION;
  for (const { groups, plus } of chains(text)) {
    let i = 0;
    while (i < groups.length) {
      let found: Cut | undefined, next = i + 1;
      let joined = "";
      const ends: number[] = [];
      for (
        let j = i;
        j < groups.length && joined.length + groups[j].digits.length <= LONGEST;
        j++
      ) {
        joined += groups[j].digits;
        ends.push(j);
      }
      for (let k = ends.length - 1; k >= 0 && !found; k--) {
        const j = ends[k];
        const d = joined.slice(0, groups.slice(i, j + 1).reduce((s, g) => s + g.digits.length, 0));
        const stuck = groups[i].stuck || groups[j].stuck;
        const category = classify(d, plus && i === 0, stuck ? cardOnly : policy);
        if (category) {
          found = {
            start: groups[i].start - (plus && i === 0 ? 1 : 0),
            end: groups[j].end,
            category,
          };
          next = j + 1;
        }
      }
      if (found) cuts.push(found);
      i = next;
    }
  }
  return cuts;
}

const TLD = String.raw`(?:com|in|org|net|co|edu|gov|io|info|biz|me|ai|कॉम)`;
const SPOKEN_DOT = String.raw`(?:\s+(?:dot|डॉट)\s+|\.)`;
const LOCAL_SEP = String.raw`(?:\s+(?:dot|underscore|dash|hyphen|डॉट)\s+|[._+-])`;
const NAME = String.raw`[\p{L}\p{M}\p{Nd}]+`;
/** Written, and spoken: "john dot smith at gmail dot com", "at the rate" (Indian English), "एट". */
const EMAIL = new RegExp(
  String.raw`(?<![\p{L}\p{M}\p{Nd}._+-])${NAME}(?:${LOCAL_SEP}${NAME})*` +
    String.raw`(?:\s*@\s*|\s+(?:at(?:\s+the\s+rate)?|एट)\s+)` +
    String.raw`${NAME}(?:${SPOKEN_DOT}${NAME})*${SPOKEN_DOT}${TLD}(?![\p{L}\p{M}\p{Nd}])`,
  "giu",
);
/** A UPI id (name@bank, no dot after): a payment address, so `account`. */
const UPI = /(?<![\p{L}\p{Nd}._@-])[\p{L}\p{Nd}._-]{2,64}@[a-z]{2,32}(?![\p{L}\p{Nd}.@-])/giu;
/** An IFSC (bank branch code), kept with the account it comes with: `account`. */
const IFSC = /(?<![\p{L}\p{Nd}])[A-Z]{4}0[A-Z0-9]{6}(?![\p{L}\p{Nd}])/giu;
/** PAN: five letters (the fourth the holder's kind), four digits, a letter. */
const PAN = /(?<![\p{L}\p{Nd}])[A-Z]{3}[PCHFATBLJG][A-Z][0-9]{4}[A-Z](?![\p{L}\p{Nd}])/giu;

function patternCuts(text: string, re: RegExp, category: Category): Cut[] {
  return [...text.matchAll(re)].map((m) => ({
    start: m.index,
    end: m.index + m[0].length,
    category,
  }));
}

/**
 * `text` with every match of the policy's categories replaced by `[category]`. The same text and
 * policy always give the same result, and redacting the result changes nothing.
 */
export function redact(text: string, policy: RedactionPolicy): string {
  if (policy.size === 0 || text.length === 0) return text;
  // A placeholder may join what a cut split (two digit groups either side of an e-mail): settle
  // to a fixed point, so redaction is idempotent. Each pass only shortens digit runs.
  for (let pass = 0; pass < 8; pass++) {
    const next = redactOnce(text, policy);
    if (next === text) return text;
    text = next;
  }
  return text;
}

function redactOnce(text: string, policy: RedactionPolicy): string {
  let cuts: Cut[] = [];
  if (policy.has("email")) cuts.push(...patternCuts(text, EMAIL, "email"));
  if (policy.has("pan")) cuts.push(...patternCuts(text, PAN, "pan"));
  if (policy.has("account")) {
    cuts.push(...patternCuts(text, UPI, "account"), ...patternCuts(text, IFSC, "account"));
  }
  cuts.push(...digitCuts(text, policy));
  if (!cuts.length) return text;
  // Earliest first, the longer of two that start together; an overlapped cut is dropped.
  cuts = cuts.sort((a, b) => a.start - b.start || b.end - a.end);
  let out = "", at = 0;
  for (const c of cuts) {
    if (c.start < at) continue;
    out += text.slice(at, c.start) + `[${c.category}]`;
    at = c.end;
  }
  return out + text.slice(at);
}

/**
 * Every string inside `value` (objects, arrays) redacted; other values as they are. Returns the
 * value itself when nothing changed, so an unredacted call copies nothing.
 */
export function redactDeep<T>(value: T, policy: RedactionPolicy): T {
  if (policy.size === 0) return value;
  if (typeof value === "string") return redact(value, policy) as T;
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((v) => {
      const r = redactDeep(v, policy);
      if (r !== v) changed = true;
      return r;
    });
    return (changed ? out : value) as T;
  }
  if (value !== null && typeof value === "object" && !(value instanceof Date)) {
    let changed = false;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const r = redactDeep(v, policy);
      if (r !== v) changed = true;
      out[k] = r;
    }
    return (changed ? out : value) as T;
  }
  return value;
}
