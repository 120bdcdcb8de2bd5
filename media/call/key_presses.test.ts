import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import type { Sql } from "../../db/client.ts";
import type { SessionEvent } from "../../db/events.ts";
import { SessionLog } from "./session_log.ts";
import { DUPLICATE_MS, KEY_PRESS_LIMIT, KeyPresses } from "./key_presses.ts";

function setup(sensitive = () => false) {
  let now = 0;
  const written: SessionEvent[] = [];
  const log = new SessionLog({} as Sql, "ses_1", 10_000, {
    write: (events) => Promise.resolve(void written.push(...events)),
  });
  const delivered: string[] = [];
  const keys = new KeyPresses(log, (d) => delivered.push(d.digit), () => now, sensitive);
  const kinds = async () => {
    await log.flush();
    return written.map((e) =>
      `${e.kind}${e.kind === "dtmf_dropped" ? `:${(e.data as { count: number }).count}` : ""}`
    );
  };
  const rows = async () => (await log.flush(), written);
  return { keys, delivered, kinds, rows, advance: (ms: number) => (now += ms) };
}

Deno.test("a burst passes up to the limit's burst, then keys pass at its rate; the rest are noted as dropped, at most once a second", async () => {
  const t = setup();
  t.keys.open();
  for (let i = 0; i < 100; i++) t.keys.press({ digit: "2", durationMs: 40 });
  assertEquals(t.delivered.length, KEY_PRESS_LIMIT.burst);
  t.advance(1000);
  for (let i = 0; i < 100; i++) t.keys.press({ digit: "3", durationMs: 40 });
  assertEquals(t.delivered.length, KEY_PRESS_LIMIT.burst + KEY_PRESS_LIMIT.perSecond);
  t.keys.close();
  const kinds = await t.kinds();
  assertEquals(kinds.filter((k) => k === "dtmf").length, 40);
  // The first drop is noted at once, the next second's at its first drop, the rest at the end.
  assertEquals(kinds.filter((k) => k.startsWith("dtmf_dropped")), [
    "dtmf_dropped:1",
    "dtmf_dropped:80",
    "dtmf_dropped:79",
  ]);
  assertEquals(t.keys.dropped, 160);
});

Deno.test("keys pressed before the brain is up are held and sent in order when it is", () => {
  const t = setup();
  t.keys.press({ digit: "1", durationMs: 100 });
  t.keys.press({ digit: "#", durationMs: 100 });
  assertEquals(t.delivered, []);
  t.keys.open();
  assertEquals(t.delivered, ["1", "#"]);
  t.keys.press({ digit: "5", durationMs: 100 });
  assertEquals(t.delivered, ["1", "#", "5"]);
});

Deno.test("while the keypad is sensitive the record says * for each key and the brain gets the digit", async () => {
  let sensitive = false;
  const t = setup(() => sensitive);
  t.keys.open();
  t.keys.press({ digit: "7", durationMs: 80 });
  sensitive = true;
  for (const digit of "4921") t.keys.press({ digit, durationMs: 80 });
  sensitive = false;
  t.keys.press({ digit: "#", durationMs: 80 });
  assertEquals(t.delivered.join(""), "74921#");
  const written = JSON.stringify(await t.rows());
  assertEquals(written.match(/"digit":"[^"]*"/g), [
    '"digit":"7"',
    '"digit":"*"',
    '"digit":"*"',
    '"digit":"*"',
    '"digit":"*"',
    '"digit":"#"',
  ]);
  // No field of a sensitive key's row holds its digit (ids and times hold digits of their own).
  for (const row of (await t.rows()).slice(1, 5)) {
    for (const v of Object.values(row.data as object)) assert(!"4921".includes(String(v)), written);
  }
});

Deno.test("a press heard as a tone and as an event reaches the brain once, in either order", () => {
  const t = setup();
  t.keys.open();
  t.keys.press({ digit: "5", durationMs: 100, via: "tone" });
  t.advance(40);
  t.keys.press({ digit: "5", durationMs: 100 }); // its RFC 4733 event, a little later
  t.advance(300);
  t.keys.press({ digit: "8", durationMs: 100 }); // the event first this time
  t.advance(60);
  t.keys.press({ digit: "8", durationMs: 100, via: "tone" });
  assertEquals(t.delivered, ["5", "8"]);
  assertEquals(t.keys.duplicates, 2);
});

Deno.test("the same key pressed twice quickly, sent both ways, is two presses; one way only, never merged", () => {
  const t = setup();
  t.keys.open();
  for (let i = 0; i < 2; i++) {
    t.keys.press({ digit: "1", durationMs: 80, via: "tone" });
    t.advance(20);
    t.keys.press({ digit: "1", durationMs: 80 });
    t.advance(150);
  }
  assertEquals(t.delivered, ["1", "1"]);
  // Tones alone, 100 ms apart: each is its own press.
  for (let i = 0; i < 3; i++) {
    t.keys.press({ digit: "2", durationMs: 60, via: "tone" });
    t.advance(100);
  }
  // A tone and an event of one digit further apart than DUPLICATE_MS are two presses.
  t.keys.press({ digit: "3", durationMs: 60, via: "tone" });
  t.advance(DUPLICATE_MS + 1);
  t.keys.press({ digit: "3", durationMs: 60 });
  assertEquals(t.delivered.join(""), "1122233");
});
