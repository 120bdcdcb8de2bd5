import { assertEquals } from "../../tests/helpers/assert.ts";
import { TelephoneEvents } from "./telephone_event.ts";
import type { DtmfDigit } from "./line.ts";

const body = (event: number, end: boolean, duration: number) =>
  new Uint8Array([event, (end ? 0x80 : 0) | 10, duration >> 8, duration & 0xff]);

function events() {
  const digits: DtmfDigit[] = [];
  return { digits, te: new TelephoneEvents((d) => digits.push(d)) };
}

Deno.test("each of the 16 keys is named as RFC 4733 section 3.2 numbers them", () => {
  const { digits, te } = events();
  for (let e = 0; e < 16; e++) te.push(1000 * e, body(e, true, 400));
  assertEquals(digits.map((d) => d.digit).join(""), "0123456789*#ABCD");
  assertEquals(digits[0].durationMs, 50);
});

Deno.test("an event whose end packets were all lost is reported when the next one starts", () => {
  const { digits, te } = events();
  te.push(8000, body(5, false, 160));
  te.push(8000, body(5, false, 320));
  te.push(9600, body(7, false, 160));
  te.push(9600, body(7, true, 480));
  assertEquals(digits, [{ digit: "5", durationMs: 40 }, { digit: "7", durationMs: 60 }]);
  assertEquals([te.stats.endLost, te.stats.digits], [1, 2]);
});

Deno.test("an unended event is reported once the caller's audio runs 100 ms past it, not before", () => {
  const { digits, te } = events();
  te.push(8000, body(3, false, 800));
  te.audioAt(8000 + 800 + 800); // exactly 100 ms past: not yet
  assertEquals(digits.length, 0);
  te.audioAt(8000 + 800 + 801);
  te.audioAt(20000);
  te.push(8000, body(3, true, 800)); // its end packet, late: already reported
  assertEquals(digits, [{ digit: "3", durationMs: 100 }]);
  assertEquals([te.stats.endLost, te.stats.redundant], [1, 1]);
});

Deno.test("flash and tone events, and short payloads, are ignored", () => {
  const { digits, te } = events();
  te.push(0, body(16, true, 800)); // hook flash
  te.push(100, new Uint8Array(3));
  assertEquals([digits.length, te.stats.ignored], [0, 2]);
});
