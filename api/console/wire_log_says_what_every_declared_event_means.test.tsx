// The console's log names what every declared session event means (hovering its kind), so an
// operator reading a record needs no source code; a kind no longer declared (an old record's) is
// still shown, without a meaning, never dropped.
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import type { LoggedEvent } from "../../common/session_events.ts";
import { SESSION_EVENTS } from "../../common/session_event_meanings.ts";
import { WireLog } from "./wire_log.tsx";

const from = new Date("2026-01-01T00:00:00Z");

/** One event of every declared source and kind, a second apart. */
const everyKind = Object.entries(SESSION_EVENTS).flatMap(([source, kinds]) =>
  Object.keys(kinds).map((kind) => ({ source, kind }))
).map((e, i) => ({ ...e, at: new Date(from.getTime() + i * 1000), data: {} }) as LoggedEvent);

const unescape = (html: string) =>
  html.replaceAll("&#39;", "'").replaceAll("&quot;", '"').replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">").replaceAll("&amp;", "&");

/** The rows of the rendered log: source, kind and the kind cell's title. */
async function rows(log: LoggedEvent[]): Promise<string[][]> {
  const html = String(await (<WireLog log={log} from={from} href={() => "#log"} />).toString());
  return [
    ...html.matchAll(
      /<tr data-source="([^"]*)" data-kind="([^"]*)">[\s\S]*?<td class="mono small"(?: title="([^"]*)")? ?>/g,
    ),
  ].map((m) => [m[1], m[2], unescape(m[3] ?? "")]);
}

Deno.test("every declared event's row carries what it means", async () => {
  const shown = await rows(everyKind);
  assertEquals(shown.length, everyKind.length);
  for (const [source, kind, title] of shown) {
    const meaning = (SESSION_EVENTS as Record<string, Record<string, string>>)[source][kind];
    assert(meaning.length > 0, `${source}/${kind} has no meaning`);
    assertEquals(title, meaning, `${source}/${kind}`);
  }
});

Deno.test("an event of a kind no longer declared is shown without a meaning", async () => {
  const old = { at: from, source: "to_brain", kind: "playback_interrupted", data: {} };
  const hasOwn = { at: from, source: "worker", kind: "toString", data: {} };
  assertEquals(await rows([old, hasOwn] as unknown as LoggedEvent[]), [
    ["to_brain", "playback_interrupted", ""],
    ["worker", "toString", ""],
  ]);
});
