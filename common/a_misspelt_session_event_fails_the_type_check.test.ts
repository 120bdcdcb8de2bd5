// The declared session events are what the type checker holds the log's writers and readers to:
// each `@ts-expect-error` below is a mistake `deno check` (and so `deno test`) must refuse; were
// the declaration loosened to let one through, the unused directive fails the check instead.
import { assertEquals } from "../tests/helpers/assert.ts";
import {
  isEvent,
  isFailureEvent,
  type LoggedEvent,
  type SessionEventWriter,
} from "./session_events.ts";

/** A writer that keeps what it was given, as the database would. */
function keeping(): SessionEventWriter & { rows: LoggedEvent<number>[] } {
  const rows: LoggedEvent<number>[] = [];
  return {
    rows,
    add(source, kind, data) {
      rows.push({ at: rows.length, source, kind, data } as LoggedEvent<number>);
    },
  };
}

Deno.test("a writer takes declared kinds with their data and nothing else", () => {
  const log = keeping();
  log.add("worker", "call_ended", { status: "ended", reason: "hangup" });
  log.add("sip", "confirmed", {});
  // @ts-expect-error a misspelt kind
  log.add("worker", "call_endd", { status: "ended", reason: "hangup" });
  // @ts-expect-error a misspelt field
  log.add("worker", "call_ended", { status: "ended", reason: "hangup", reasn: "x" });
  // @ts-expect-error a field missing
  log.add("worker", "call_ended", { status: "ended" });
  // @ts-expect-error a kind of another source
  log.add("sip", "call_ended", { status: "ended", reason: "hangup" });
  // @ts-expect-error an undeclared source
  log.add("brain", "call_ended", { status: "ended", reason: "hangup" });
  // @ts-expect-error data left out
  log.add("worker", "brain_back");
  assertEquals(
    log.rows.length,
    8,
    "the type checker refuses them; the writer itself checks nothing",
  );
});

Deno.test("a reader that names a source and kind gets that event's data", () => {
  const log = keeping();
  log.add("worker", "brain_unreachable", { detail: "refused", brain_url: "ws://b" });
  log.add("worker", "reply_timeout", { turn_id: "t1", after_ms: 5000 });
  const timeouts = log.rows.filter((e) => isEvent(e, "worker", "reply_timeout"));
  assertEquals(timeouts.map((e) => e.data.after_ms), [5000]);
  // @ts-expect-error a field the event does not carry
  timeouts.map((e) => e.data.detail);
  // @ts-expect-error a kind not declared
  log.rows.filter((e) => isEvent(e, "worker", "reply_timout"));
  assertEquals(log.rows.filter(isFailureEvent).map((e) => e.data.brain_url), ["ws://b"]);
});
