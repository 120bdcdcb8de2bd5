// What every fault test checks once the call is over: the named end, a session log that ends with
// it, and nothing left on the worker.
import { assert, assertEquals } from "./assert.ts";
import type { InProcessCallService, LogEntry } from "./call_harness.ts";
import type { TestCaller } from "../../caller/caller.ts";

/** The record once ended `status`/`reason`, checked: its log ends with the end, the call is gone. */
export async function endedAs(
  service: InProcessCallService,
  sessionId: string,
  status: "ended" | "failed",
  reason: string,
  ms = 15_000,
  // deno-lint-ignore no-explicit-any
): Promise<any> {
  const record = await service.record(sessionId, status, ms);
  assertEquals([record.status, record.end_reason], [status, reason]);
  const log = record.log as LogEntry[];
  const last = log.at(-1)!;
  assertEquals(
    [last.kind, last.data],
    ["call_ended", { status, reason }],
    "the log ends with the end",
  );
  await service.noCalls();
  assert(!service.context.calls.has(sessionId), "the call left the worker's calls map");
  return record;
}

/** The page was told the call failed: a fatal RTVI error. */
export async function pageToldFatal(caller: TestCaller): Promise<string> {
  const m = await caller.waitForMessage(
    (m) => m.type === "error" && (m.data as { fatal?: boolean })?.fatal === true,
  );
  return String((m.data as { message: string }).message);
}

/** Kinds of the log's entries from `source`, in order. */
export function kinds(log: LogEntry[], source: string): string[] {
  return log.filter((e) => e.source === source).map((e) => e.kind);
}
