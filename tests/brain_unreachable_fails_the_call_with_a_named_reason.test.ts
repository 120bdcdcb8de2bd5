// A brain the worker cannot use at call start fails the call with a reason naming why: nothing
// listens (brain_unreachable), it accepts TCP but never completes the WebSocket handshake
// (brain_connect_timeout), it answers HTTP that is not an upgrade (brain_unreachable). The page
// gets a fatal error, the log ends with the end, no call or socket is left, and the worker then
// serves a call with a working brain.
import { assert, assertEquals } from "./helpers/assert.ts";
import { startInProcessCallService } from "./helpers/call_harness.ts";
import { endedAs, pageToldFatal } from "./helpers/fault_checks.ts";
import { withBrainLimits } from "../media/brain/limits.ts";
import { createBrain } from "../sdk/brain/mod.ts";

Deno.test("a brain that cannot be used at call start fails the call, named", async (t) => {
  const service = await startInProcessCallService(
    createBrain({ onSessionStart: () => "Hello.", onTurn: () => "OK." }),
  );
  try {
    await t.step("nothing listens: failed/brain_unreachable", async () => {
      const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
      const url = `ws://127.0.0.1:${(l.addr as Deno.NetAddr).port}/brain`;
      l.close();
      const { caller, sessionId } = await service.callAs(await service.tenantFor(url));
      const message = await pageToldFatal(caller);
      assert(message.includes("refused") || message.includes("reached"), message);
      const record = await endedAs(service, sessionId, "failed", "brain_unreachable");
      const entry = record.log.find((e: { kind: string }) => e.kind === "brain_unreachable");
      assert(entry?.data.detail, "the log says why");
      await caller.hangUp();
    });

    await t.step("TCP accepted, no handshake: failed/brain_connect_timeout", async () => {
      const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
      const url = `ws://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/brain`;
      // Holds each connection, reads the upgrade request, never answers; notes when it closes.
      const closedAt: number[] = [];
      const holding = (async () => {
        for await (const conn of listener) {
          (async () => {
            const buf = new Uint8Array(4096);
            while ((await conn.read(buf).catch(() => null)) !== null) { /* never answers */ }
            closedAt.push(performance.now());
            conn.close();
          })();
        }
      })().catch(() => {});
      try {
        await withBrainLimits({ connectTimeoutMs: 1000 }, async () => {
          const tenant = await service.tenantFor(url);
          const { caller, sessionId } = await service.callAs(tenant);
          const readyAt = performance.now();
          await pageToldFatal(caller);
          const record = await endedAs(service, sessionId, "failed", "brain_connect_timeout");
          const entry = record.log.find((e: { kind: string }) =>
            e.kind === "brain_connect_timeout"
          );
          assert(/within 1000 ms/.test(entry.data.detail), entry.data.detail);
          // The worker let go of the connection at the timeout, not later.
          assertEquals(closedAt.length, 1, "the half-open brain connection was closed");
          const after = closedAt[0] - readyAt;
          assert(
            after >= 900 && after < 2500,
            `closed ${after.toFixed(0)} ms after the call began`,
          );
          await caller.hangUp();
        });
      } finally {
        listener.close();
        await holding;
      }
    });

    await t.step(
      "HTTP that is not an upgrade: failed/brain_unreachable naming the status",
      async () => {
        const server = Deno.serve(
          { hostname: "127.0.0.1", port: 0, onListen: () => {} },
          () => new Response("gone", { status: 410 }),
        );
        try {
          const url = `ws://127.0.0.1:${server.addr.port}/brain`;
          const { caller, sessionId } = await service.callAs(await service.tenantFor(url));
          assert((await pageToldFatal(caller)).includes("HTTP 410"));
          await endedAs(service, sessionId, "failed", "brain_unreachable");
          await caller.hangUp();
        } finally {
          await server.shutdown();
        }
      },
    );

    await t.step("the worker then serves a call with a working brain", async () => {
      const { caller, sessionId } = await service.call();
      await caller.waitForMessage((m) => m.type === "bot-stopped-speaking", 15_000);
      await caller.hangUp();
      await endedAs(service, sessionId, "ended", "hangup");
    });
  } finally {
    await service.close();
  }
});
