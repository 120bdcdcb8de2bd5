// Each category finds what it must and leaves what it must not; redaction settles in one call.
import { assertEquals, assertThrows } from "../tests/helpers/assert.ts";
import fc from "fast-check";
import {
  CATEGORIES,
  luhnValid,
  NO_REDACTION,
  policyOf,
  redact,
  REDACT_ALL,
  redactDeep,
  verhoeffValid,
} from "./redaction.ts";

const only = (...c: string[]) => policyOf(c);

Deno.test("card: written with spaces or dashes, spoken in English and Hindi, Luhn-valid only", () => {
  const p = only("card");
  assertEquals(redact("card 4532 0151 1283 0366 ok", p), "card [card] ok");
  assertEquals(redact("4532-0151-1283-0366", p), "[card]");
  assertEquals(redact("378282246310005", p), "[card]"); // a 15-digit Amex test number
  assertEquals(
    redact("four five three two zero one five one one two eight three zero three six six", p),
    "[card]",
  );
  assertEquals(
    redact("कार्ड चार पांच तीन दो शून्य एक पांच एक एक दो आठ तीन शून्य तीन छह छह", p),
    "कार्ड [card]",
  );
  assertEquals(redact("४५३२ ०१५१ १२८३ ०३६६", p), "[card]"); // Devanagari numerals
  // Not Luhn-valid: not a card (an account, if that category is on).
  assertEquals(redact("4532 0151 1283 0367", p), "4532 0151 1283 0367");
  assertEquals(redact("4532 0151 1283 0367", only("card", "account")), "[account]");
});

Deno.test("account: 9 to 18 digits, UPI ids and IFSC codes", () => {
  const p = only("account");
  assertEquals(redact("account 123456789012 at the branch", p), "account [account] at the branch");
  assertEquals(redact("one two three four five six seven eight nine", p), "[account]");
  assertEquals(redact("pay ravi.k@okhdfcbank now", p), "pay [account] now");
  assertEquals(redact("IFSC HDFC0001234", p), "IFSC [account]");
  assertEquals(redact("12345678", p), "12345678"); // eight digits: too short
  assertEquals(redact("1234567890123456789", p), "1234567890123456789"); // 19: too long
});

Deno.test("phone: Indian mobiles with +91 or 0, E.164, spoken", () => {
  const p = only("phone");
  assertEquals(redact("call 9876543210", p), "call [phone]");
  assertEquals(redact("call +91 98765 43210", p), "call [phone]");
  assertEquals(redact("call 098765-43210", p), "call [phone]");
  assertEquals(redact("call 919876543210", p), "call [phone]");
  assertEquals(redact("call +44 20 7946 0958", p), "call [phone]");
  assertEquals(redact("nine eight seven six five four three two one zero", p), "[phone]");
  assertEquals(redact("मेरा नंबर नौ आठ सात छह पांच चार तीन दो एक शून्य है", p), "मेरा नंबर [phone] है");
  assertEquals(redact("double nine eight seven six five four three two one", p), "[phone]");
  // Ten digits starting 1-5 is not an Indian mobile.
  assertEquals(redact("5876543210", p), "5876543210");
});

Deno.test("email: written and spoken, with at the rate and Hindi", () => {
  const p = only("email");
  assertEquals(redact("mail ravi.k+x@example.co.in today", p), "mail [email] today");
  assertEquals(redact("it is john dot smith at gmail dot com", p), "it is [email]");
  assertEquals(redact("ravi at the rate yahoo dot co dot in", p), "[email]");
  assertEquals(redact("रवि एट जीमेल डॉट कॉम", p), "[email]");
  // "at" without a domain ending is not an e-mail.
  assertEquals(redact("see you at home dot", p), "see you at home dot");
  assertEquals(redact("meet at noon", p), "meet at noon");
});

Deno.test("aadhaar (Verhoeff) and pan", () => {
  assertEquals(verhoeffValid("234123412346"), true);
  assertEquals(verhoeffValid("234123412347"), false);
  assertEquals(redact("aadhaar 2341 2341 2346", only("aadhaar")), "aadhaar [aadhaar]");
  assertEquals(redact("2341 2341 2347", only("aadhaar")), "2341 2341 2347");
  assertEquals(redact("PAN ABCPE1234F", only("pan")), "PAN [pan]");
  assertEquals(redact("pan abcpe1234f", only("pan")), "pan [pan]");
  assertEquals(redact("ABCDE1234F", only("pan")), "ABCDE1234F"); // D is no holder kind
});

Deno.test("false positives left alone: times, dates, amounts, short numbers, order ids", () => {
  for (
    const text of [
      "meet at 10:30 on 2024-05-12",
      "it costs ₹1,50,000.50 or Rs. 2,499",
      "room 42, flat 1203, pin code 560001",
      "order ORD-123456789012 and ticket AB1234567890",
      "version 4.5.3.2.0.1.5.1.1.2.8.3.0.3.6.6",
      "I need two tickets for five people",
      "hello, how are you?",
    ]
  ) assertEquals(redact(text, REDACT_ALL), text, text);
});

Deno.test("a card and a phone number side by side are each their own", () => {
  assertEquals(
    redact("4532015112830366 9876543210", REDACT_ALL),
    "[card] [phone]",
  );
});

Deno.test("no policy changes nothing; an unknown category is refused by name", () => {
  assertEquals(redact("4532 0151 1283 0366", NO_REDACTION), "4532 0151 1283 0366");
  assertEquals(
    assertThrows(() => policyOf(["card", "cvv"]), RangeError).message.includes("cvv"),
    true,
  );
  assertEquals([...policyOf([...CATEGORIES])].length, CATEGORIES.length);
});

Deno.test("redactDeep redacts strings in objects and arrays and returns the same value when clean", () => {
  const clean = { a: "hello", b: [1, "two"] };
  assertEquals(redactDeep(clean, REDACT_ALL) === clean, true);
  assertEquals(
    redactDeep({ turns: [{ user_text: "call 9876543210", n: 9876543210 }] }, REDACT_ALL),
    { turns: [{ user_text: "call [phone]", n: 9876543210 }] },
  );
});

/** A Luhn-valid 16-digit number from 15 random digits. */
const card16 = fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 15, maxLength: 15 }).map(
  (ds) => {
    const body = ds.join("");
    for (let c = 0; c <= 9; c++) if (luhnValid(body + c)) return body + c;
    throw new Error("unreachable");
  },
);
const pieces = fc.oneof(
  card16,
  card16.map((c) => c.replace(/(\d{4})(?=\d)/g, "$1 ")),
  fc.constantFrom(" ", "-", "+", "@", " at ", " dot com", "nine", "double", "ok", "0", "\n"),
  fc.string({ maxLength: 6 }),
  fc.stringMatching(/^[0-9 -]{1,20}$/),
);
const texts = fc.array(pieces, { maxLength: 12 }).map((p) => p.join(""));

Deno.test("property: redaction is idempotent and leaves no Luhn-valid 16-digit run", () => {
  fc.assert(
    fc.property(texts, (text) => {
      const once = redact(text, REDACT_ALL);
      assertEquals(redact(once, REDACT_ALL), once);
      const cardOnly = redact(text, only("card"));
      assertEquals(redact(cardOnly, only("card")), cardOnly);
      for (const out of [once, cardOnly]) {
        // Every run of 16 digits, alone or grouped by spaces and dashes, as the categories read.
        for (const run of out.match(/(?<![0-9])[0-9](?:[ -]*[0-9])*(?![0-9])/g) ?? []) {
          const d = run.replace(/[ -]/g, "");
          if (d.length === 16 && luhnValid(d)) {
            throw new Error(`Luhn-valid run left in ${JSON.stringify(out)}`);
          }
        }
      }
    }),
    { numRuns: 2000 },
  );
});
