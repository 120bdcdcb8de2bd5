import { assertEquals } from "../../tests/helpers/assert.ts";
import type { Sql } from "../../db/client.ts";
import type { SessionEvent } from "../../db/events.ts";
import { SessionLog } from "./session_log.ts";
import { KEY_PRESS_LIMIT, KeyPresses } from "./key_presses.ts";

function setup() {
  let now = 0;
  const written: SessionEvent[] = [];
  const log = new SessionLog({} as Sql, "ses_1", 10_000, {
    write: (events) => Promise.resolve(void written.push(...events)),
  });
  const delivered: string[] = [];
  const keys = new KeyPresses(log, (d) => delivered.push(d.digit), () => now);
  const kinds = async () => {
    await log.flush();
    return written.map((e) =>
      `${e.kind}${e.kind === "dtmf_dropped" ? `:${(e.data as { count: number }).count}` : ""}`
    );
  };
  return { keys, delivered, kinds, advance: (ms: number) => (now += ms) };
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
