// A brain that stops answering while its WebSocket stays open (its process hung, its path
// black-holed: TCP up, no bytes) is found by the worker's pings: the page is warned (a non-fatal
// RTVI error), then the call fails brain_unresponsive with a fatal one, within the configured
// bound. A brain that answers pings is alive, however quiet: it keeps the call through a long
// caller silence, even when it never answers its turns (that is the brain's business). The bound
// is shortened here (BRAIN_UNRESPONSIVE_SECONDS is 15 s by default).
import { assert, assertEquals } from "./helpers/assert.ts";
import { startInProcessCallService } from "./helpers/call_harness.ts";
import { endedAs, kinds, pageToldFatal } from "./helpers/fault_checks.ts";
import { rawBrain } from "./helpers/raw_brain.ts";
import { stallingProxy } from "./helpers/stalling_proxy.ts";
import { withBrainLimits } from "../media/brain/limits.ts";
import type { LogEntry } from "./helpers/call_harness.ts";
import type { RtviMessage, TestCaller } from "../caller/caller.ts";

const GREETING = "Hello there.";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const errorsOf = (caller: TestCaller) =>
  caller.messages.filter((m) => m.type === "error").map((m) =>
    m.data as { error: string; fatal: boolean }
  );

function greeted(caller: TestCaller): Promise<RtviMessage> {
  return caller.waitForMessage(
    (m) =>
      m.type === "bot-output" &&
      (m.data as { spoken_status: string }).spoken_status === "completed" &&
      (m.data as { text: string }).text === GREETING,
    20_000,
  );
}

Deno.test("a brain that stops answering fails the call as unresponsive", async (t) => {
  // Greets, then says nothing more (its WebSocket still answers pings by itself).
  const brain = rawBrain(async (call) => {
    await call.next("session_start");
    call.send("greeting", { text: GREETING });
  });
  const service = await startInProcessCallService(brain);
  try {
    await t.step(
      "its connection goes silent: the page is warned, then failed/brain_unresponsive",
      async () => {
        const boundMs = 3000;
        const proxy = stallingProxy(Number(new URL(service.brainUrl).port));
        try {
          await withBrainLimits({ unresponsiveMs: boundMs }, async () => {
            const tenant = await service.tenantFor(`ws://127.0.0.1:${proxy.port}/brain`);
            const { caller, sessionId } = await service.callAs(tenant);
            await greeted(caller);
            const stalledAt = performance.now();
            proxy.stall();

            const warning = await caller.waitForMessage(
              (m) => m.type === "error" && (m.data as { fatal: boolean }).fatal === false,
              boundMs + 10_000,
            );
            const warnedMs = performance.now() - stalledAt;
            const warned = (warning.data as { error: string }).error;
            assert(/sent nothing for [\d.]+ s \(pings unanswered\)/.test(warned), warned);
            assert(warned.includes("the call ends in"), warned);

            const fatal = await pageToldFatal(caller);
            const failedMs = performance.now() - stalledAt;
            assert(fatal.includes("not even a pong"), fatal);
            const record = await endedAs(service, sessionId, "failed", "brain_unresponsive");
            const worker = kinds(record.log, "worker");
            assert(
              worker.indexOf("brain_silent") >= 0 &&
                worker.indexOf("brain_silent") < worker.indexOf("brain_unresponsive"),
              worker.join(" "),
            );
            const end = (record.log as LogEntry[]).find((e) => e.kind === "brain_unresponsive")!;
            const silentS = Number(/for ([\d.]+) s/.exec(end.data.detail as string)?.[1]);
            assert(silentS >= boundMs / 1000, end.data.detail as string);
            // One warning, then one fatal error: nothing else went wrong.
            assertEquals(errorsOf(caller).map((e) => e.fatal), [false, true]);
            console.log(
              `bound ${boundMs} ms: warned ${warnedMs.toFixed(0)} ms and failed ` +
                `${failedMs.toFixed(0)} ms after the path stalled`,
            );
            await caller.hangUp();
          });
        } finally {
          await proxy.close();
        }
      },
    );

    await t.step(
      "a quiet brain that answers pings keeps the call through a long caller silence",
      async () => {
        const boundMs = 1500;
        // Idle every second, and the brain never answers it: turns time out, the brain is alive.
        await withBrainLimits({ unresponsiveMs: boundMs, replyTimeoutMs: 500 }, async () => {
          const { caller, sessionId } = await service.call({
            config: { idle: { timeout_ms: 1000 } },
          });
          await greeted(caller);
          await sleep(4 * boundMs);
          assertEquals(errorsOf(caller), [], "the page was told nothing went wrong");
          const live = await service.record(sessionId);
          assertEquals(live.status, "active");
          const log = live.log as LogEntry[];
          assert(kinds(log, "to_brain").includes("user_idle"), "idle turns were sent");
          assert(kinds(log, "worker").includes("reply_timeout"), "and not answered");
          assert(!kinds(log, "worker").includes("brain_silent"), "yet the brain was not silent");
          await caller.hangUp();
          await endedAs(service, sessionId, "ended", "hangup");
        });
      },
    );
  } finally {
    await service.close();
  }
});
