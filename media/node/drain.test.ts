import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { type DrainableCall, drainCalls } from "./drain.ts";

/** A call that ends by itself after `ms` (never when undefined), or when told to. */
function fakeCall(calls: Map<string, DrainableCall>, id: string, ms?: number) {
  let resolve!: () => void;
  const ended = new Promise<void>((r) => (resolve = r));
  const reasons: string[] = [];
  const finish = (reason: string) => {
    if (!calls.has(id)) return;
    reasons.push(reason);
    calls.delete(id);
    resolve();
  };
  const timer = ms === undefined ? undefined : setTimeout(() => finish("hangup"), ms);
  const call = {
    ended,
    reasons,
    end(_status: "ended", reason: "worker_shutdown") {
      clearTimeout(timer);
      finish(reason);
      return ended;
    },
  };
  calls.set(id, call);
  return call;
}

Deno.test("a drain waits for calls that end by themselves and cuts none", async () => {
  const calls = new Map<string, DrainableCall>();
  const a = fakeCall(calls, "a", 50);
  const b = fakeCall(calls, "b", 150);
  const result = await drainCalls(calls, 5_000);
  assertEquals([result.endedByThemselves, result.endedAtDeadline], [2, 0]);
  assertEquals([a.reasons, b.reasons], [["hangup"], ["hangup"]]);
  assert(result.waitedMs >= 140 && result.waitedMs < 2_000, `waited ${result.waitedMs} ms`);
});

Deno.test("calls still running at the drain deadline end with worker_shutdown", async () => {
  const calls = new Map<string, DrainableCall>();
  const short = fakeCall(calls, "short", 20);
  const long = fakeCall(calls, "long");
  const result = await drainCalls(calls, 300);
  assertEquals([short.reasons, long.reasons], [["hangup"], ["worker_shutdown"]]);
  assertEquals([result.endedByThemselves, result.endedAtDeadline], [1, 1]);
  assert(result.waitedMs >= 290, `ended at ${result.waitedMs} ms, before the deadline`);
  assertEquals(calls.size, 0);
});

Deno.test("a call that arrives during the drain is waited for under the same deadline", async () => {
  const calls = new Map<string, DrainableCall>();
  fakeCall(calls, "first", 300);
  let late: ReturnType<typeof fakeCall> | undefined;
  setTimeout(() => (late = fakeCall(calls, "late")), 100);
  const result = await drainCalls(calls, 600);
  assertEquals(late?.reasons, ["worker_shutdown"]);
  assertEquals(result.endedAtDeadline, 1);
});

Deno.test("an aborted drain ends the calls at once", async () => {
  const calls = new Map<string, DrainableCall>();
  const call = fakeCall(calls, "a");
  const abort = new AbortController();
  setTimeout(() => abort.abort(), 50);
  const result = await drainCalls(calls, 60_000, abort.signal);
  assertEquals(call.reasons, ["worker_shutdown"]);
  assert(result.waitedMs < 1_000, `waited ${result.waitedMs} ms after the abort`);
});
