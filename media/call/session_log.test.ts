// The session log while the database is away: events stay in memory in order and are written
// when it returns; the buffer is bounded (page-channel events go first, counted in one marker);
// an event the database refuses is left out without holding back the rest.
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { setQuiet } from "../../common/log.ts";
import type { Sql } from "../../db/client.ts";
import type { SessionEvent } from "../../db/events.ts";
import { type LogCap, SessionLog } from "./session_log.ts";

setQuiet(true);

const FAST = { firstMs: 5, maxMs: 20, jitter: 0 };
const unreachable = () =>
  Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });

/** A database the test switches off and on; it keeps what it was given. */
function fakeDatabase() {
  const db = {
    up: true,
    attempts: 0,
    rows: [] as SessionEvent[],
    refuse: (_e: SessionEvent) => false,
    write(events: SessionEvent[]): Promise<void> {
      db.attempts++;
      if (!db.up) return Promise.reject(unreachable());
      if (events.some(db.refuse)) {
        return Promise.reject(
          Object.assign(new Error("unsupported Unicode escape sequence"), {
            name: "PostgresError",
            code: "22P05",
          }),
        );
      }
      db.rows.push(...events);
      return Promise.resolve();
    },
  };
  return db;
}

function logOn(db: ReturnType<typeof fakeDatabase>, cap?: Partial<LogCap>) {
  return new SessionLog({} as Sql, "ses_1", 10, {
    write: (e) => db.write(e),
    retry: FAST,
    cap,
  });
}

/**
 * The buffer's mechanics never read an event's kind or data: these tests label events freely to
 * follow their order, past the declared kinds (common/session_events.ts) `add` takes.
 */
function labelled(log: SessionLog, source: string, kind: string, data?: unknown): void {
  (log as unknown as { add(source: string, kind: string, data?: unknown): void })
    .add(source, kind, data);
}

const until = async (cond: () => boolean, ms = 3000) => {
  const end = performance.now() + ms;
  while (!cond()) {
    if (performance.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 5));
  }
};

Deno.test("events added while the database is away are written in order when it returns", async () => {
  const db = fakeDatabase();
  const log = logOn(db);
  labelled(log, "worker", "a");
  assertEquals(await log.flush(), true);
  db.up = false;
  for (let i = 0; i < 50; i++) labelled(log, i % 2 ? "page" : "worker", `e${i}`, { i });
  assertEquals(await log.flush(), false, "flush says the events are not stored yet");
  await new Promise((r) => setTimeout(r, 100)); // several retries fail meanwhile
  assert(db.attempts > 3, `retried ${db.attempts} times`);
  assertEquals(log.pending, 50);
  db.up = true;
  await until(() => log.pending === 0);
  assertEquals(db.rows.map((e) => e.kind), ["a", ...Array.from({ length: 50 }, (_, i) => `e${i}`)]);
  assertEquals(log.lost, { dropped: 0, rejected: 0 });
  assertEquals(await log.flush(), true);
  log.close();
});

Deno.test("past its cap the log drops the oldest page-channel events first and counts them", async () => {
  const db = fakeDatabase();
  db.up = false;
  const log = logOn(db, { events: 10 });
  labelled(log, "worker", "call_started");
  for (let i = 0; i < 20; i++) {
    labelled(log, "to_page", `chat${i}`);
    if (i % 5 === 0) labelled(log, "from_brain", `frame${i}`);
  }
  labelled(log, "worker", "call_ended");
  assert(log.pending <= 10, `${log.pending} buffered`);
  db.up = true;
  assertEquals(await log.flush(), true);
  const kinds = db.rows.map((e) => e.kind);
  // Every worker and brain event is kept, in order; the newest page events fill the rest.
  assertEquals(kinds.filter((k) => !k.startsWith("chat")), [
    "call_started",
    "log_events_dropped",
    "frame0",
    "frame5",
    "frame10",
    "frame15",
    "call_ended",
  ]);
  const marker = db.rows.find((e) => e.kind === "log_events_dropped")!;
  const data = marker.data as { count: number; by_source: Record<string, number> };
  const keptChats = kinds.filter((k) => k.startsWith("chat"));
  assertEquals(keptChats, keptChats.toSorted((a, b) => +a.slice(4) - +b.slice(4)));
  assertEquals(data.count, 20 - keptChats.length);
  assertEquals(data.by_source, { to_page: data.count });
  assertEquals(log.lost.dropped, data.count);
  assertEquals(keptChats.at(-1), "chat19", "the newest are kept");
  log.close();
});

Deno.test("with only worker and brain events buffered, the oldest of them are dropped at the cap", async () => {
  const db = fakeDatabase();
  db.up = false;
  const log = logOn(db, { events: 5 });
  for (let i = 0; i < 12; i++) labelled(log, "from_brain", `f${i}`);
  db.up = true;
  assertEquals(await log.flush(), true);
  const kinds = db.rows.map((e) => e.kind);
  assertEquals(kinds, ["log_events_dropped", "f8", "f9", "f10", "f11"]);
  assertEquals((db.rows[0].data as { count: number }).count, 8);
  log.close();
});

Deno.test("the byte cap bounds the buffer too", async () => {
  const db = fakeDatabase();
  db.up = false;
  const log = logOn(db, { bytes: 20_000 });
  const text = "x".repeat(1000);
  for (let i = 0; i < 100; i++) labelled(log, "page", "chat", { i, text });
  assert(log.pending < 25, `${log.pending} buffered`);
  db.up = true;
  assertEquals(await log.flush(), true);
  const dropped = db.rows.find((e) => e.kind === "log_events_dropped")!.data as { count: number };
  assertEquals(dropped.count + db.rows.length - 1, 100, "every event is written or counted");
  log.close();
});

Deno.test("an event the database refuses is left out and the others are written", async () => {
  const db = fakeDatabase();
  db.refuse = (e) => e.kind === "bad";
  const log = logOn(db);
  for (let i = 0; i < 9; i++) labelled(log, "worker", i === 6 ? "bad" : `ok${i}`);
  assertEquals(await log.flush(), true);
  assertEquals(db.rows.map((e) => e.kind), [
    "ok0",
    "ok1",
    "ok2",
    "ok3",
    "ok4",
    "ok5",
    "ok7",
    "ok8",
  ]);
  assertEquals(log.lost, { dropped: 0, rejected: 1 });
  log.close();
});

Deno.test("events are batched: one write per flush while the database answers", async () => {
  const db = fakeDatabase();
  const log = logOn(db);
  for (let i = 0; i < 30; i++) labelled(log, "to_page", "chat", i);
  await until(() => db.rows.length === 30);
  assertEquals(db.attempts, 1);
  log.close();
});

Deno.test("close stops the retries and says how many events were never written", async () => {
  const db = fakeDatabase();
  db.up = false;
  const log = logOn(db);
  labelled(log, "worker", "a");
  labelled(log, "worker", "b");
  assertEquals(await log.flush(), false);
  assertEquals(log.close(), 2);
  const attempts = db.attempts;
  await new Promise((r) => setTimeout(r, 60));
  assertEquals(db.attempts, attempts, "no attempt after close");
});
