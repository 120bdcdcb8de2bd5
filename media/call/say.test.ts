import { assertEquals } from "../../tests/helpers/assert.ts";
import { sayRefusal, type SayState, sayUnitId } from "./say.ts";

const free: SayState = {
  ending: false,
  transferring: false,
  listening: true,
  botBusy: false,
  maxChars: 20,
};

Deno.test("a Say is left to the floor only when the call can speak it", () => {
  assertEquals(sayRefusal("Your order shipped", free), undefined);
  assertEquals(sayRefusal("  ", free), "nothing to say: the text is empty");
  assertEquals(
    sayRefusal("x".repeat(21), free),
    "the text is 21 characters; a Say takes at most 20",
  );
  assertEquals(sayRefusal("hi", { ...free, ending: true }), "the call is ending");
  assertEquals(sayRefusal("hi", { ...free, transferring: true }), "a transfer is under way");
  assertEquals(
    sayRefusal("hi", { ...free, listening: false }),
    "the call has not started listening",
  );
  assertEquals(sayRefusal("hi", { ...free, botBusy: true }), "the bot is speaking");
});

Deno.test("a Say's unit is named by the brain's id, or by its turn when it gave none", () => {
  assertEquals(sayUnitId("say.1", "t4"), "say.1");
  assertEquals(sayUnitId("", "t4"), "t4");
});
