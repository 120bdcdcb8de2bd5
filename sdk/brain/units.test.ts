// Speech units from a token stream: the cases shared with the Python SDK
// (sdk/speech_units_cases.json), each fed as given, one code point at a time and whole, plus the
// TypeScript-only parts (async and plain iterables, closing the stream, refusals).
import { assertEquals, assertMatch, assertThrows } from "../../tests/helpers/assert.ts";
import { createBrain } from "./brain.ts";
import { deferred, TestWorker } from "./test_worker.ts";
import { speechUnits, type UnitOptions, UnitSplitter } from "./units.ts";

interface Case {
  name: string;
  tokens: string[];
  options?: { first_min_chars?: number; min_chars?: number; max_chars?: number };
  units: string[];
}

const CASES: Case[] = JSON.parse(
  await Deno.readTextFile(new URL("../speech_units_cases.json", import.meta.url)),
);

function split(tokens: string[], options: UnitOptions): string[] {
  const splitter = new UnitSplitter(options);
  return [...tokens.flatMap((t) => splitter.push(t)), ...splitter.end()];
}

Deno.test("every shared case gives the same units however the text is chunked", () => {
  assertEquals(CASES.length > 20, true);
  for (const c of CASES) {
    const options: UnitOptions = {
      firstMinChars: c.options?.first_min_chars,
      minChars: c.options?.min_chars,
      maxChars: c.options?.max_chars,
    };
    const whole = c.tokens.join("");
    const feeds: [string, string[]][] = [
      ["as streamed", c.tokens],
      ["code point by code point", [...whole]],
      ["whole", [whole]],
    ];
    for (const [how, tokens] of feeds) {
      assertEquals(split(tokens, options), c.units, `${c.name} (${how})`);
    }
  }
});

Deno.test("a unit is yielded as soon as the token that ends it arrives", async () => {
  const sent: ((token: string | undefined) => void)[] = [];
  async function* llm() {
    for (;;) {
      const token = await new Promise<string | undefined>((r) => sent.push(r));
      if (token === undefined) return;
      yield token;
    }
  }
  const units = speechUnits(llm());
  const first = units.next();
  await new Promise((r) => setTimeout(r, 0));
  sent.shift()!("Hello there. ");
  assertEquals((await first).value, "Hello there.");
  const rest = (async () => {
    const out: string[] = [];
    for await (const u of units) out.push(u);
    return out;
  })();
  for (const token of ["Bye", undefined]) {
    while (sent.length === 0) await new Promise((r) => setTimeout(r, 0));
    sent.shift()!(token);
  }
  assertEquals(await rest, ["Bye"]);
});

Deno.test("a plain iterable of tokens works too", async () => {
  const out: string[] = [];
  for await (const u of speechUnits(["One. ", "Two."], { minChars: 0 })) out.push(u);
  assertEquals(out, ["One.", "Two."]);
});

Deno.test("closing the units early closes the token stream", async () => {
  let closed = false;
  async function* llm() {
    try {
      yield "First sentence. Second";
      await new Promise((r) => setTimeout(r, 10_000));
      yield " sentence.";
    } finally {
      closed = true;
    }
  }
  const units = speechUnits(llm());
  assertEquals((await units.next()).value, "First sentence.");
  await units.return(); // what the SDK does to onTurn's generator on Cancel
  assertEquals(closed, true);
});

Deno.test("bad options and tokens are refused clearly", () => {
  const refused = (fn: () => unknown, type: typeof RangeError, words: string) =>
    assertMatch(assertThrows(fn, type).message, new RegExp(words));
  refused(() => new UnitSplitter({ maxChars: 0 }), RangeError, "maxChars must be >= 1");
  refused(() => new UnitSplitter({ minChars: -1 }), RangeError, "minChars must be a whole");
  refused(
    () => new UnitSplitter({ firstMinChars: 50, maxChars: 40 }),
    RangeError,
    "at least firstMinChars",
  );
  const splitter = new UnitSplitter();
  refused(() => splitter.push(3 as unknown as string), TypeError, "got number");
  assertEquals(splitter.push("Still fine. "), ["Still fine."]);
});

Deno.test("the turn's signal ends speechUnits at once, even while the model is still waiting", async () => {
  const stuck = deferred<IteratorResult<string>>();
  let returned = false;
  const model: AsyncIterator<string> & AsyncIterable<string> = {
    next: () => stuck.promise, // a model that never answers again
    return: () => {
      returned = true;
      return Promise.resolve({ done: true, value: undefined });
    },
    [Symbol.asyncIterator]: () => model,
  };
  const abort = new AbortController();
  const units = speechUnits(model, { signal: abort.signal });
  const next = units.next();
  abort.abort();
  assertEquals(await next, { done: true, value: undefined });
  assertEquals(returned, true);
});

Deno.test("a brain yielding speechUnits of a model stream speaks unit by unit; Cancel ends the model", async () => {
  const modelClosed = deferred();
  async function* model(signal: AbortSignal): AsyncGenerator<string> {
    try {
      const tokens = [
        "Sure, let me look ",
        "that up for you",
        ". It is 3",
        ".14 metres long, end to end. ",
      ];
      for (const token of tokens) yield token;
      // Still thinking when the caller talks over the bot: a fetch given the signal ends here.
      await new Promise((r) => signal.addEventListener("abort", r));
      yield "Never spoken.";
    } finally {
      modelClosed.resolve();
    }
  }
  const served = createBrain({
    onTurn: (turn) => speechUnits(model(turn.signal), { signal: turn.signal }),
  }).serve({ hostname: "127.0.0.1", port: 0, path: "/brain" });
  const worker = await TestWorker.dial(served.url, "ses_1");
  try {
    worker.start("ses_1");
    await worker.next(); // the greeting
    worker.send("user_turn", { turn_id: "t1", text: "how long is it" });
    const texts = (await worker.take(2)).map((f) => (f.speech_unit as { text: string }).text);
    assertEquals(texts, [
      "Sure, let me look that up for you.",
      "It is 3.14 metres long, end to end.",
    ]);
    worker.send("cancel", { turn_id: "t1" });
    await modelClosed.promise;
    worker.send("user_turn", { turn_id: "t2", text: "ok" }); // no unit of t1 comes in between
    const after = await worker.next();
    assertEquals((after.speech_unit as { turn_id: string }).turn_id, "t2");
  } finally {
    await worker.close();
    await served.shutdown();
  }
});
