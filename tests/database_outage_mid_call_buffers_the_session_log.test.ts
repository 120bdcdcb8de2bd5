// The database goes away in the middle of a call, for less than the stale window: the call goes
// on (its audio comes back, its page messages are answered, it is not hung up), the session log
// waits in the worker's memory and arrives whole and in order when the database returns; the
// worker warns once rather than once per attempt, and its heartbeat comes back by itself.
import { assert, assertEquals } from "./helpers/assert.ts";
import { makeTenant, startTestApi } from "./helpers/api_server.ts";
import { startWorkerProcess } from "./helpers/process.ts";
import { switchableProxy } from "./helpers/switchable_proxy.ts";
import {
  echoLoudness,
  eventually,
  pageMessageAnswered,
  sessionLog,
  sessionRow,
  startEchoCall,
} from "./helpers/live_call.ts";
import type { TestCaller } from "../caller/caller.ts";

Deno.test("a database outage mid-call: the call goes on and its log arrives whole when it returns", async () => {
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
    const before = [await pageMessageAnswered(caller, "before")];
    assert(await echoLoudness(caller) > 500, "the echo works before the outage");

    proxy.cut();
    const cutAt = performance.now();
    const during: string[] = [];
    for (let i = 0; i < 4; i++) {
      during.push(await pageMessageAnswered(caller, `during-${i}`));
      await new Promise((r) => setTimeout(r, 250));
    }
    const loud = await echoLoudness(caller);
    assert(loud > 500, `the echo comes back during the outage: rms ${loud}`);
    // The row (read past the proxy) still says active, and nothing said during the outage is in.
    const mid = await sessionRow(api.db.sql, sessionId);
    assertEquals(mid.status, "active");
    const partial = await sessionLog(api.db.sql, sessionId);
    const ids = (events: typeof partial) =>
      events.filter((e) => e.source === "page" && e.kind === "client-message")
        .map((e) => e.data.t);
    assertEquals(ids(partial).filter((t) => String(t).startsWith("during")), []);
    const outageMs = performance.now() - cutAt;
    assert(outageMs < 8000, `outage of ${Math.round(outageMs)} ms stays inside the stale window`);

    proxy.restore();
    const restoredAt = performance.now();
    const log = await eventually("the buffered log", async () => {
      const events = await sessionLog(api.db.sql, sessionId);
      return ids(events).length === 1 + during.length ? events : undefined;
    }, 15_000);
    const arrivedMs = Math.round(performance.now() - restoredAt);
    assertEquals(ids(log), ["before", "during-0", "during-1", "during-2", "during-3"]);
    // In order and once each: the log's ids follow the events' own times.
    const times = log.map((e) => new Date(e.at).getTime());
    assertEquals(times, times.toSorted((a, b) => a - b));
    assertEquals(log.filter((e) => e.kind === "log_events_dropped"), []);
    const answers = log.filter((e) =>
      e.source === "to_page" && /server-response/.test(String(e.data))
    );
    assertEquals(answers.length, 1 + during.length, "each answer logged once");
    void before;

    // Still the same call, still active, still alive.
    assertEquals((await sessionRow(api.db.sql, sessionId)).status, "active");
    await pageMessageAnswered(caller, "after");
    await caller.hangUp();
    const ended = await eventually("the end", async () => {
      const row = await sessionRow(api.db.sql, sessionId);
      return row.status === "active" ? undefined : row;
    }, 8000);
    assertEquals([ended.status, ended.end_reason], ["ended", "hangup"]);
    const kinds = (await sessionLog(api.db.sql, sessionId)).map((e) => e.kind);
    for (const k of ["offer_accepted", "call_started", "call_ended"]) {
      assert(kinds.includes(k), `log lacks ${k}`);
    }

    // The heartbeat comes back at its next interval (2 s).
    const count = (re: RegExp) =>
      worker.child.output().split("\n").filter((l) => re.test(l)).length;
    await eventually(
      "the heartbeat",
      () => Promise.resolve(count(/heartbeat written again/) || undefined),
      5000,
    );
    const out = worker.child.output();
    assertEquals(count(/could not write session events/), 1, out);
    assert(count(/heartbeat failed/) <= 1, out);
    assertEquals(count(/heartbeat written again/), 1, out);
    assertEquals(count(/session events written again/), 1, out);
    assert(!/Uncaught|unhandled/i.test(out), out);
    console.log(`log arrived ${arrivedMs} ms after the database came back`);
  } finally {
    await caller?.hangUp();
    await worker.stop();
    proxy.close();
    await api.close();
  }
});
