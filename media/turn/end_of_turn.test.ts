import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { DEFAULT_END_OF_TURN_BOUNDS, EndOfTurnPolicy } from "./end_of_turn.ts";
import { endOfTurnDefaults } from "./lexicon.ts";

Deno.test("complete words get a shorter window than neutral ones, hesitant ones a longer one", () => {
  const p = new EndOfTurnPolicy("LANGUAGE_EN");
  const complete = p.windowMs("what time is it");
  const neutral = p.windowMs("I would like to check my order");
  const hesitant = p.windowMs("I would like to check my order and");
  assert(complete < neutral && neutral < hesitant, `${complete} ${neutral} ${hesitant}`);
  const d = endOfTurnDefaults("en");
  assertEquals([complete, neutral, hesitant], [d.complete_ms, d.neutral_ms, d.hesitant_ms]);
  assertEquals(p.windowMs("um"), d.hesitant_ms);
});

Deno.test("a caller who pauses long within turns gets longer windows, within the bounds", () => {
  const quick = new EndOfTurnPolicy("en");
  const slow = new EndOfTurnPolicy("en");
  for (const ms of [700, 800, 900]) slow.observePause(ms);
  const text = "I would like to check my order";
  assert(slow.windowMs(text) > quick.windowMs(text), `${slow.windowMs(text)}`);
  // The average follows the pauses (alpha 0.3): 700 → 730 → 781.
  assertEquals(Math.round(slow.pauseAverageMs!), 781);
  assertEquals(slow.windowMs(text), Math.round(781 * 1.25));
  // Complete words still end sooner than neutral ones, but later than for a quick caller.
  assertEquals(slow.windowMs("yes"), Math.round(781 * 0.5));
  assert(slow.windowMs("yes") > quick.windowMs("yes"));
  // Very long pauses are capped.
  for (let i = 0; i < 20; i++) slow.observePause(5000);
  assertEquals(slow.windowMs("so"), DEFAULT_END_OF_TURN_BOUNDS.maxMs);
});

Deno.test("languages have their own defaults and no window leaves [min, max]", () => {
  const p = new EndOfTurnPolicy("LANGUAGE_HI", { minMs: 300, maxMs: 900 });
  assertEquals(p.windowMs("नहीं"), Math.max(300, endOfTurnDefaults("hi").complete_ms));
  assertEquals(p.windowMs("मैं सोच रहा था कि"), 900);
});

Deno.test("a pause after words the turn cannot end on does not stretch the caller's windows", () => {
  const p = new EndOfTurnPolicy("en");
  // "um …" and a phone number's first digits explain the pause: nothing learnt.
  p.observePause(1500, "I need to change my um");
  p.observePause(1500, "my number is nine eight four");
  assertEquals(p.pauseAverageMs, undefined);
  assertEquals(p.windowMs("meet on Friday instead"), endOfTurnDefaults("en").neutral_ms);
  // A pause at words that could have ended the turn is this caller's way of pausing.
  p.observePause(800, "I was thinking about Friday");
  assertEquals(p.pauseAverageMs, 800);
  assertEquals(p.windowMs("meet on Friday instead"), 1000);
  // Without the words (they were not in yet) the pause counts, as before.
  p.observePause(500);
  assertEquals(Math.round(p.pauseAverageMs!), Math.round(0.3 * 500 + 0.7 * 800));
});
