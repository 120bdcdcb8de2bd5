// Callers read a phone number out in groups, pausing between them; every group ends on a number,
// which alone looks like a finished turn. After a phone word the turn is held (the hanging
// window) until the digits make a phone number.
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { EndOfTurnPolicy } from "./end_of_turn.ts";
import { endOfTurnDefaults, readsOutPhoneNumber } from "./lexicon.ts";

Deno.test("digits after a phone word, short of ten, read as a phone number going on", () => {
  for (
    const [text, language] of [
      ["my number is nine eight four", "en"],
      ["my mobile number is nine eight four five two one", "en"],
      ["phone 98 45", "en"],
      ["you can reach me on my mobile 98 45", "en"],
      ["मेरा नंबर नौ आठ चार", "hi"],
      ["मेरा मोबाइल नंबर है नौ नौ एक दो तीन चार", "hi"],
      ["আমার নম্বর নয় আট চার", "bn"],
      ["என் நம்பர் ஒன்பது எட்டு நாலு", "ta"],
      ["నా నంబర్ తొమ్మిది ఎనిమిది నాలుగు", "te"],
      ["mera number nau aath", "hi"],
      ["मेरा मोबाइल नंबर है नौ नौ एक", "hi"],
      // Zero is a digit in every script served ("two one zero").
      ["मेरा नंबर नौ आठ शून्य", "hi"],
      ["আমার নম্বর নয় আট শূন্য", "bn"],
      // A calling phrase, once a first group of three digits is in.
      ["call me on nine one two", "en"],
      ["you can call us on 984", "en"],
      ["इस पर कॉल करो आठ सात छह", "hi"],
      ["এই নম্বরে কল করুন নয় আট সাত", "bn"],
    ]
  ) assert(readsOutPhoneNumber(text, language), `${language}: "${text}"`);
  for (
    const [text, language] of [
      // Ten digits: the number is whole.
      ["my number is nine eight four five two one two three four seven", "en"],
      ["my number is 9845212347", "en"],
      ["मेरा नंबर नौ आठ चार पाँच दो एक दो तीन चार सात", "hi"],
      // No phone word, or too far from the digits: a table for four is a finished turn.
      ["a table for four", "en"],
      ["my number of guests will be four", "en"],
      // "number" alone is any number: an order's, a room's.
      ["my order number is 42", "en"],
      ["room number two one four", "en"],
      ["two three four", "en"],
      // Words after the digits: not a number being read out.
      ["my number is nine eight four thank you", "en"],
      // A calling phrase and fewer than three digits: a time or a count.
      ["call me at five", "en"],
      ["call me tomorrow at five thirty", "en"],
      ["मुझे पाँच बजे कॉल करो दो", "hi"],
    ]
  ) assert(!readsOutPhoneNumber(text, language), `${language}: "${text}"`);
});

Deno.test("each group of a phone number waits the hanging window; the tenth digit the number's", () => {
  const p = new EndOfTurnPolicy("en");
  const d = endOfTurnDefaults("en");
  assertEquals(p.windowMs("my number is nine eight four"), d.hesitant_ms);
  assertEquals(p.windowMs("my number is nine eight four five two one"), d.hesitant_ms);
  assertEquals(
    p.windowMs("my number is nine eight four five two one two three four seven"),
    d.complete_ms,
  );
  // Round 2's rule, for the bench's comparison: the group looked complete.
  const round2 = Object.assign(new EndOfTurnPolicy("en"), { phoneNumbers: false });
  assertEquals(round2.windowMs("my number is nine eight four"), d.complete_ms);
  // The agent's turn patience scales the hold like every window.
  const quick = new EndOfTurnPolicy("en", { scale: 0.75 });
  assertEquals(quick.windowMs("my number is nine eight four"), Math.round(d.hesitant_ms * 0.75));
});
