// The end of a call written after the call is over: retried until the database takes it (log
// first, then the end, with the time since the call ended); kept as the API left it when the
// session was already failed, the worker's own end going to the log; given a last bounded try
// when the worker stops.
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { setQuiet } from "../../common/log.ts";
import type { Sql } from "../../db/client.ts";
import type { SessionEvent } from "../../db/events.ts";
import { EndRecords, type FinishFn } from "./record_writer.ts";
import { SessionLog } from "./session_log.ts";

setQuiet(true);

const FAST = { firstMs: 10, maxMs: 40, jitter: 0 };
const unreachable = () =>
  Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });

/** One switchable database behind the log and the end, recording the order of writes. */
function fakeDatabase() {
  const db = {
    up: true,
    /** What the session row says; `active` until an end is written. */
    row: ["active", null] as [string, string | null],
    writes: [] as string[],
    endedSecondsAgo: [] as number[],
    events: [] as SessionEvent[],
    write(events: SessionEvent[]): Promise<void> {
      if (!db.up) return Promise.reject(unreachable());
      db.events.push(...events);
      db.writes.push(`log:${events.map((e) => e.kind).join(",")}`);
      return Promise.resolve();
    },
    finish: ((_sql, _id, status, reason, outcome) => {
      if (!db.up) return Promise.reject(unreachable());
      db.endedSecondsAgo.push(outcome.endedSecondsAgo ?? -1);
      if (db.row[0] !== "active") return Promise.resolve(false);
      db.row = [status, reason];
      db.writes.push(`end:${status}/${reason}`);
      return Promise.resolve(true);
    }) as FinishFn,
  };
  return db;
}

function setUp(firstTryWaitMs = 3000) {
  const db = fakeDatabase();
  const log = new SessionLog({} as Sql, "ses_1", 10, { write: (e) => db.write(e), retry: FAST });
  const records = new EndRecords({
    finish: (...args) => db.finish(...args),
    readStatus: () => Promise.resolve(db.row),
    retry: FAST,
    firstTryWaitMs,
  });
  const end = (reason = "hangup") =>
    records.write({
      sql: {} as Sql,
      sessionId: "ses_1",
      status: "ended",
      reason,
      outcome: { recognisedSeconds: 2.5, synthesizedCharacters: 40 },
      log,
    });
  return { db, log, records, end };
}

Deno.test("an end that cannot be written is retried until the database takes it, log first", async () => {
  const { db, log, records, end } = setUp();
  log.add("worker", "call_started", { about: null });
  db.up = false;
  log.add("worker", "call_ended", { status: "ended", reason: "hangup" });
  const write = end();
  await write.firstTry;
  assertEquals(records.pending, 1, "still pending after a failed first try");
  await new Promise((r) => setTimeout(r, 300));
  assertEquals(db.writes, []);
  db.up = true;
  assertEquals(await write.done, "written");
  assertEquals(db.writes, ["log:call_started,call_ended", "end:ended/hangup"]);
  assertEquals(db.row, ["ended", "hangup"]);
  assert(db.endedSecondsAgo[0] >= 0.3, `ended ${db.endedSecondsAgo[0]} s before the write`);
  assertEquals(records.pending, 0);
});

Deno.test("a session the API already failed keeps its record; the worker's end goes to its log", async () => {
  const { db, log, end } = setUp();
  db.row = ["failed", "worker_lost"];
  log.add("worker", "call_ended", { status: "ended", reason: "hangup" });
  assertEquals(await end().done, "already_ended");
  assertEquals(db.row, ["failed", "worker_lost"]);
  const note = db.events.find((e) => e.kind === "end_not_recorded")!;
  assertEquals(note.source, "worker");
  const data = note.data as Record<string, unknown>;
  assertEquals([data.status, data.reason], ["ended", "hangup"]);
  assertEquals([data.recorded_status, data.recorded_reason], ["failed", "worker_lost"]);
  assertEquals([data.recognised_seconds, data.synthesized_characters], [2.5, 40]);
});

Deno.test("an end whose write committed without an answer is not noted as someone else's", async () => {
  const db = fakeDatabase();
  let calls = 0;
  const finish = db.finish;
  db.finish = ((...args: Parameters<FinishFn>) => {
    calls++;
    const done = finish(...args);
    // The first write commits, but its answer is lost with the connection.
    return calls === 1 ? done.then(() => Promise.reject(unreachable())) : done;
  }) as FinishFn;
  const log = new SessionLog({} as Sql, "ses_2", 10, { write: (e) => db.write(e), retry: FAST });
  const records = new EndRecords({
    finish: db.finish,
    readStatus: () => Promise.resolve(db.row),
    retry: FAST,
  });
  log.add("worker", "call_ended", { status: "ended", reason: "hangup" });
  const write = records.write({
    sql: {} as Sql,
    sessionId: "ses_2",
    status: "ended",
    reason: "hangup",
    outcome: {},
    log,
  });
  assertEquals(await write.done, "written");
  assertEquals(calls, 2);
  assertEquals(db.events.some((e) => e.kind === "end_not_recorded"), false);
});

Deno.test("the first try does not keep the call waiting on a write that hangs", async () => {
  const { db, end } = setUp(100);
  let release!: () => void;
  const hung = new Promise<void>((r) => (release = r));
  const finish = db.finish;
  db.finish = (async (...args: Parameters<FinishFn>) => {
    await hung;
    return finish(...args);
  }) as FinishFn;
  const write = end();
  const started = performance.now();
  await write.firstTry;
  const waited = performance.now() - started;
  assert(waited >= 90 && waited < 1000, `firstTry waited ${waited} ms`);
  release();
  assertEquals(await write.done, "written");
});

Deno.test("when the worker stops, pending ends get a last bounded try, then are given up", async () => {
  const stillDown = setUp();
  stillDown.db.up = false;
  stillDown.log.add("worker", "call_ended", { status: "ended", reason: "hangup" });
  const lost = stillDown.end();
  await lost.firstTry;
  const started = performance.now();
  assertEquals(await stillDown.records.settle(300), { settled: 0, abandoned: 1 });
  assert(performance.now() - started < 1000);
  assertEquals(await lost.done, "abandoned");
  assertEquals(stillDown.records.pending, 0);

  const comesBack = setUp();
  // A writer with a minute of backoff between attempts.
  const slow = new EndRecords({
    finish: comesBack.db.finish,
    readStatus: () => Promise.resolve(comesBack.db.row),
    retry: { firstMs: 60_000, maxMs: 60_000, jitter: 0 },
  });
  comesBack.db.up = false;
  const write = slow.write({
    sql: {} as Sql,
    sessionId: "ses_1",
    status: "ended",
    reason: "worker_shutdown",
    outcome: {},
    log: comesBack.log,
  });
  await write.firstTry;
  setTimeout(() => (comesBack.db.up = true), 100);
  // The settle does not wait out the minute of backoff: it tries again at once and every 250 ms.
  assertEquals(await slow.settle(2000), { settled: 1, abandoned: 0 });
  assertEquals(await write.done, "written");
  assertEquals(comesBack.db.row, ["ended", "worker_shutdown"]);
});
