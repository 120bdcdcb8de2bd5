// A caller who hangs up, or who silently vanishes (no more pings), ends the call within 5 s:
// the session is ended with its reason and the node's slot is given back.
import { assert, assertEquals } from "./helpers/assert.ts";
import { makeTenant, startTestApi, type TestApi } from "./helpers/api_server.ts";
import { startWorkerProcess } from "./helpers/process.ts";
import { TestCaller } from "../caller/caller.ts";

async function endedWithin(api: TestApi, sessionId: string, ms: number) {
  const start = performance.now();
  while (performance.now() - start < ms) {
    const [row] = await api.db.sql`select status, end_reason from sessions where id = ${sessionId}`;
    if (row.status === "ended" || row.status === "failed") return row;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`session ${sessionId} still running after ${ms} ms`);
}

Deno.test("hang-up detection", async (t) => {
  const api = await startTestApi({}, { node: false });
  const worker = await startWorkerProcess(api.db.url);
  const acme = await makeTenant(api, "acme", { brain_url: "echo:" });
  const start = async (pingIntervalMs?: number) => {
    const r = await api.post("/api/v1/sessions.connect", { agent_id: acme.agent_id }, acme.sk);
    const caller = await TestCaller.connect({
      offerUrl: r.body.webrtc_request_params.endpoint,
      headers: r.body.webrtc_request_params.headers,
      pingIntervalMs,
    });
    await caller.ready();
    return { caller, sessionId: r.body.session_id as string };
  };
  try {
    await t.step("the page disconnects (data channel and peer closed)", async () => {
      const { caller, sessionId } = await start();
      await caller.hangUp();
      const row = await endedWithin(api, sessionId, 5000);
      assertEquals([row.status, row.end_reason], ["ended", "hangup"]);
    });

    await t.step("the page goes quiet: no ping for 3 s", async () => {
      const { caller, sessionId } = await start(3_600_000); // pings never come
      try {
        const row = await endedWithin(api, sessionId, 5000);
        assertEquals([row.status, row.end_reason], ["ended", "no_ping"]);
        const peerLeft = await caller.waitForMessage((m) =>
          m.type === "signalling" && (m.message as { type?: string })?.type === "peerLeft"
        );
        assert(peerLeft, "the page is told the bot left");
      } finally {
        await caller.hangUp();
      }
    });

    await t.step("disconnect-bot from the page ends the call", async () => {
      const { caller, sessionId } = await start();
      caller.sendRtvi("disconnect-bot", {});
      const row = await endedWithin(api, sessionId, 5000);
      assertEquals([row.status, row.end_reason], ["ended", "disconnect_bot"]);
      await caller.hangUp();
    });

    const [node] = await api.db
      .sql`select active_calls from worker_nodes where id = ${worker.nodeId}`;
    assertEquals(node.active_calls, 0);
  } finally {
    await worker.stop();
    await api.close();
  }
});
