import { assertEquals } from "../../tests/helpers/assert.ts";
import { chatLogData, REFUSED_EXCERPT_CHARS } from "./chat_log.ts";

Deno.test("a taken frame is logged whole; a refused one by why, its size and a bounded excerpt", () => {
  assertEquals(chatLogData('{"label":"rtvi-ai"}'), '{"label":"rtvi-ai"}');
  const huge = "z".repeat(1_048_602);
  assertEquals(chatLogData(huge, "larger than 65536 bytes"), {
    refused: "larger than 65536 bytes",
    chars: 1_048_602,
    excerpt: "z".repeat(REFUSED_EXCERPT_CHARS),
  });
  assertEquals(chatLogData("{nope", "not JSON"), {
    refused: "not JSON",
    chars: 5,
    excerpt: "{nope",
  });
});

Deno.test("a refused frame's excerpt is storable: no U+0000, no surrogate half left by the cut", () => {
  // 255 characters, then an emoji (a surrogate pair) that the 256-character cut splits.
  const text = "\u0000" + "a".repeat(254) + "\u{1F600}" + "tail";
  const { excerpt } = chatLogData(text, "refused") as { excerpt: string };
  assertEquals(excerpt.length, REFUSED_EXCERPT_CHARS);
  assertEquals(excerpt[0], "\uFFFD");
  assertEquals(excerpt.at(-1), "\uFFFD");
  assertEquals(excerpt.isWellFormed() && !excerpt.includes("\u0000"), true);
});

Deno.test("a refusal that quotes the frame is bounded and storable too", () => {
  const key = "k\u0000" + "e".repeat(10_000);
  const { refused } = chatLogData("{}", `The key data.${key} contains U+0000`) as {
    refused: string;
  };
  assertEquals(refused.length, REFUSED_EXCERPT_CHARS);
  assertEquals(refused.includes("\u0000"), false);
});
