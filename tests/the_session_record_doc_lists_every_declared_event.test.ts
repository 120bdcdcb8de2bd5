// docs/session-record.md's table of session events is the declared one: every kind of every source
// common/session_events.ts declares, with the meaning common/session_event_meanings.ts gives it,
// in the same order, and nothing else. A kind added, renamed or dropped without the docs fails.
import { assertEquals } from "./helpers/assert.ts";
import { SESSION_EVENTS } from "../common/session_event_meanings.ts";

const START = "<!-- session events: the declared ones, checked by a test -->";
const END = "<!-- end of session events -->";

/** The table's rows as [source, kind, meaning]. */
function documented(doc: string): string[][] {
  const from = doc.indexOf(START);
  const to = doc.indexOf(END, from);
  if (from < 0 || to < 0) throw new Error("docs/session-record.md has lost its session events");
  return doc.slice(from, to).split("\n")
    .map((line) => /^\| `([^`]+)` +\| `([^`]+)` +\| (.*?) +\|$/.exec(line))
    .filter((m) => m !== null)
    .map((m) => [m[1], m[2], m[3]]);
}

const declared = () =>
  Object.entries(SESSION_EVENTS).flatMap(([source, kinds]) =>
    Object.entries(kinds as Record<string, string>).map((
      [kind, meaning],
    ) => [source, kind, meaning])
  );

Deno.test("docs/session-record.md lists every declared session event with its meaning", async () => {
  const doc = await Deno.readTextFile(new URL("../docs/session-record.md", import.meta.url));
  const rows = documented(doc);
  const key = (r: string[]) => `${r[0]}/${r[1]}`;
  const listed = new Set(rows.map(key));
  const known = new Set(declared().map(key));
  assertEquals(
    declared().filter((r) => !listed.has(key(r))).map(key),
    [],
    "declared but not in the docs",
  );
  assertEquals(rows.filter((r) => !known.has(key(r))).map(key), [], "in the docs, not declared");
  assertEquals(rows, declared(), "the docs' rows are the declared ones, in order, with meanings");
});

Deno.test("the docs' table is read as written: a row dropped from it is missed", async () => {
  const doc = await Deno.readTextFile(new URL("../docs/session-record.md", import.meta.url));
  const without = doc.replace(/^\| `worker` +\| `call_ended` .*\n/m, "");
  assertEquals(documented(without).length, documented(doc).length - 1);
});
