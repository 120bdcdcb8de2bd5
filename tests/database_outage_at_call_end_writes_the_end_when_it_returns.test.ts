// The database is away when a call ends. The call is let go at once (the worker's calls map is
// empty, the caller waits for nothing); only the record waits. When the database returns within
// the stale window, the real end is written: ended/hangup, with the call's own seconds (not the
// outage's). When it stays away longer, the API has failed the session worker_lost first: the
// record keeps that, and the worker's own end is added to the log as `end_not_recorded`.
import { assert, assertEquals } from "./helpers/assert.ts";
import { makeTenant, startTestApi } from "./helpers/api_server.ts";
import { startWorkerProcess } from "./helpers/process.ts";
import { switchableProxy } from "./helpers/switchable_proxy.ts";
import {
  eventually,
  pageMessageAnswered,
  sessionLog,
  sessionRow,
  startEchoCall,
} from "./helpers/live_call.ts";
import type { TestCaller } from "../caller/caller.ts";

async function callsOn(workerUrl: string): Promise<number> {
  const res = await fetch(`${workerUrl}/stats`);
  return (await res.json()).calls;
}

Deno.test("a call ended while the database is away is recorded ended/hangup when it returns", async () => {
  const api = await startTestApi({}, { node: false }); // NODE_STALE_SECONDS 10
  const proxy = switchableProxy(Number(new URL(api.db.url).port));
  const worker = await startWorkerProcess(proxy.url(api.db.url));
  let caller: TestCaller | undefined;
  try {
    const acme = await makeTenant(api, "acme", { brain_url: "echo:" });
    const call = await startEchoCall(api.url, acme);
    caller = call.caller;
    const { sessionId } = call;
    await eventually("active", async () => {
      const row = await sessionRow(api.db.sql, sessionId);
      return row.status === "active" ? row : undefined;
    }, 5000);
    await new Promise((r) => setTimeout(r, 1500));
    await pageMessageAnswered(caller, "last words");

    const [{ now: cutAt }] = await api.db.sql<{ now: Date }[]>`select now()`;
    proxy.cut();
    const hungUp = performance.now();
    await caller.hangUp();
    // Let go at once: the worker holds no call, though nothing could be written.
    await eventually(
      "the call released",
      async () => (await callsOn(worker.url)) === 0 || undefined,
      2000,
    );
    const releasedMs = Math.round(performance.now() - hungUp);
    await new Promise((r) => setTimeout(r, 2500));
    const waiting = await sessionRow(api.db.sql, sessionId);
    assertEquals(waiting.status, "active", "nothing written while the database is away");

    proxy.restore();
    const restored = performance.now();
    const row = await eventually("the end", async () => {
      const r = await sessionRow(api.db.sql, sessionId);
      return r.status === "active" ? undefined : r;
    }, 15_000);
    const writtenMs = Math.round(performance.now() - restored);
    assertEquals([row.status, row.end_reason], ["ended", "hangup"]);
    // The call's own length: up to the hang-up, not up to the write.
    const upToHangUp = (cutAt.getTime() - row.started_at!.getTime()) / 1000;
    const seconds = Number(row.call_seconds);
    assert(
      seconds >= upToHangUp - 0.5 && seconds <= upToHangUp + 1.5,
      `booked ${seconds} s for a call of ${upToHangUp.toFixed(1)} s to the hang-up`,
    );
    assert(row.ended_at!.getTime() - cutAt.getTime() < 1500, "ended at the hang-up");
    const log = await sessionLog(api.db.sql, sessionId);
    const kinds = log.map((e) => e.kind);
    for (const k of ["offer_accepted", "call_started", "client-message", "call_ended"]) {
      assert(kinds.includes(k), `log lacks ${k}: ${kinds}`);
    }
    assertEquals(kinds.at(-1), "call_ended");
    const [node] = await api.db
      .sql`select active_calls from worker_nodes where id = ${worker.nodeId}`;
    assertEquals(node.active_calls, 0, "the slot is given back");
    const out = worker.child.output();
    assert(
      out.split("\n").filter((l) => /could not write the end of a call/.test(l)).length <= 1,
      out,
    );
    console.log(
      `released ${releasedMs} ms after the hang-up; written ${writtenMs} ms after the database returned`,
    );
  } finally {
    await caller?.hangUp();
    await worker.stop();
    proxy.close();
    await api.close();
  }
});

Deno.test("past the stale window the record stays worker_lost and the log keeps the worker's end", async () => {
  const stale = 3;
  const api = await startTestApi({ NODE_STALE_SECONDS: String(stale) }, { node: false });
  const proxy = switchableProxy(Number(new URL(api.db.url).port));
  const worker = await startWorkerProcess(proxy.url(api.db.url));
  let caller: TestCaller | undefined;
  try {
    const acme = await makeTenant(api, "acme", { brain_url: "echo:" });
    const call = await startEchoCall(api.url, acme);
    caller = call.caller;
    const { sessionId } = call;
    await eventually("active", async () => {
      const row = await sessionRow(api.db.sql, sessionId);
      return row.status === "active" ? row : undefined;
    }, 5000);

    proxy.cut();
    await caller.hangUp();
    const lost = await eventually("worker_lost", async () => {
      const r = await sessionRow(api.db.sql, sessionId);
      return r.status === "active" ? undefined : r;
    }, (stale + 2 + 3) * 1000);
    assertEquals([lost.status, lost.end_reason], ["failed", "worker_lost"]);

    proxy.restore();
    const note = await eventually("the worker's end in the log", async () => {
      const log = await sessionLog(api.db.sql, sessionId);
      return log.find((e) => e.kind === "end_not_recorded");
    }, 15_000);
    assertEquals(note.source, "worker");
    assertEquals([note.data.status, note.data.reason], ["ended", "hangup"]);
    assertEquals([note.data.recorded_status, note.data.recorded_reason], ["failed", "worker_lost"]);
    const row = await sessionRow(api.db.sql, sessionId);
    assertEquals([row.status, row.end_reason], ["failed", "worker_lost"], "the record is kept");
    const kinds = (await sessionLog(api.db.sql, sessionId)).map((e) => e.kind);
    assert(kinds.includes("call_ended"), `${kinds}`);
    const [node] = await api.db
      .sql`select active_calls from worker_nodes where id = ${worker.nodeId}`;
    assertEquals(node.active_calls, 0, "the slot went back once");
  } finally {
    await caller?.hangUp();
    await worker.stop();
    proxy.close();
    await api.close();
  }
});

Deno.test("a worker stopped while an end waits for the database gives it a last try before exiting", async () => {
  const api = await startTestApi({}, { node: false });
  const proxy = switchableProxy(Number(new URL(api.db.url).port));
  const worker = await startWorkerProcess(proxy.url(api.db.url));
  let caller: TestCaller | undefined;
  try {
    const acme = await makeTenant(api, "acme", { brain_url: "echo:" });
    const call = await startEchoCall(api.url, acme);
    caller = call.caller;
    const { sessionId } = call;
    await eventually("active", async () => {
      const row = await sessionRow(api.db.sql, sessionId);
      return row.status === "active" ? row : undefined;
    }, 5000);

    proxy.cut();
    await caller.hangUp();
    await eventually(
      "the call released",
      async () => (await callsOn(worker.url)) === 0 || undefined,
      2000,
    );
    // By now the end's retries are seconds apart (backoff); SIGTERM does not wait for the next:
    // the end is tried every 250 ms for up to 5 s before the worker lets its database go.
    await new Promise((r) => setTimeout(r, 4000));
    const signalled = performance.now();
    const stopped = worker.stop("SIGTERM");
    await new Promise((r) => setTimeout(r, 1000));
    proxy.restore();
    const restored = performance.now();
    const row = await eventually("the end", async () => {
      const r = await sessionRow(api.db.sql, sessionId);
      return r.status === "active" ? undefined : r;
    }, 8000);
    const writtenMs = performance.now() - restored;
    assertEquals([row.status, row.end_reason], ["ended", "hangup"], worker.child.output());
    assert(writtenMs < 3000, `written ${Math.round(writtenMs)} ms after the database returned`);
    const status = await stopped;
    const exitMs = performance.now() - signalled;
    assertEquals(status.code, 0, worker.child.output());
    // The settle (at most 5 s) and the pool's close (at most 5 s) bound the exit.
    assert(exitMs < 15_000, `exited ${Math.round(exitMs)} ms after SIGTERM`);
    assert(!/end not recorded/.test(worker.child.output()), worker.child.output());
    assertEquals((await sessionLog(api.db.sql, sessionId)).at(-1)?.kind, "call_ended");
  } finally {
    await caller?.hangUp();
    await worker.stop();
    proxy.close();
    await api.close();
  }
});
