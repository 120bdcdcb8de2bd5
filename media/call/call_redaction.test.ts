// A call's log waits for its agent's redaction: events added before it is known are redacted
// before the first write; keys are masked with `keypad`; an unreadable policy redacts everything.
import { assertEquals } from "../../tests/helpers/assert.ts";
import { setQuiet } from "../../common/log.ts";
import type { Sql } from "../../db/client.ts";
import type { SessionEvent } from "../../db/events.ts";
import { policyOf, REDACT_ALL, type RedactionPolicy } from "../../common/redaction.ts";
import { SessionLog } from "./session_log.ts";
import { callRedaction, redactEntry } from "./call_redaction.ts";

Deno.test("nothing is written before the policy is known, and then only redacted", async () => {
  const written: SessionEvent[] = [];
  const log = new SessionLog({} as Sql, "ses_1", 1, {
    write: (e) => (written.push(...e), Promise.resolve()),
  });
  let give!: (p: RedactionPolicy) => void;
  log.redactWith(new Promise((r) => (give = r)));
  log.add("worker", "typed_text", { text: "card 4532 0151 1283 0366" });
  log.add("phone", "dtmf", { digit: "7", duration_ms: 100 });
  await new Promise((r) => setTimeout(r, 30));
  assertEquals(written.length, 0);
  give(policyOf(["card", "keypad"]));
  log.add("worker", "final_text", { text: "mail a@b.com", audio_ms: 1, engine: "x" });
  assertEquals(await log.flush(), true);
  assertEquals(written.map((e) => e.data), [
    { text: "card [card]" },
    { digit: "*", duration_ms: 100 },
    { text: "mail a@b.com", audio_ms: 1, engine: "x" },
  ]);
});

Deno.test("without redaction an entry is kept as it is, the same object", () => {
  const data = { text: "4532 0151 1283 0366" };
  assertEquals(redactEntry("typed_text", data, new Set()) === data, true);
});

Deno.test("an agent's redaction that cannot be read is every category", async () => {
  setQuiet(true);
  const broken = (() => Promise.reject(new Error("database away"))) as unknown as Sql;
  assertEquals(await callRedaction(broken, "ag_1"), REDACT_ALL);
  setQuiet(false);
});
