// A worker that dies without draining (SIGKILL) cannot end its calls: the API side fails them with
// `worker_lost` once the node's heartbeat is older than NODE_STALE_SECONDS, gives the slot back and
// books the call's seconds up to the last heartbeat. No session stays `active` forever.
import { assert, assertEquals } from "./helpers/assert.ts";
import { makeTenant, startTestApi } from "./helpers/api_server.ts";
import { startWorkerProcess } from "./helpers/process.ts";
import { TestCaller } from "../caller/caller.ts";

Deno.test("a killed worker's sessions fail as worker_lost within the stale window", async () => {
  const stale = 3;
  const api = await startTestApi({ NODE_STALE_SECONDS: String(stale) }, { node: false });
  const worker = await startWorkerProcess(api.db.url, "node-doomed");
  const acme = await makeTenant(api, "acme", { brain_url: "echo:" });
  let caller: TestCaller | undefined;
  try {
    const r = await api.post("/api/v1/sessions.connect", { agent_id: acme.agent_id }, acme.sk);
    assertEquals(r.status, 200);
    const sessionId = r.body.session_id as string;
    caller = await TestCaller.connect({
      offerUrl: r.body.webrtc_request_params.endpoint,
      headers: r.body.webrtc_request_params.headers,
    });
    await caller.ready();
    // Past one heartbeat (every 2 s) after the call started, so some seconds are booked.
    await new Promise((res) => setTimeout(res, 3_000));

    const killed = performance.now();
    await worker.stop("SIGKILL");
    let row: Record<string, unknown> | undefined;
    // The window: the stale age, one heartbeat interval (2 s) and one sweep, plus slack.
    while (performance.now() - killed < (stale + 2 + 3) * 1000) {
      [row] = await api.db.sql`select status, end_reason from sessions where id = ${sessionId}`;
      if (row?.status !== "active") break;
      await new Promise((res) => setTimeout(res, 100));
    }
    const afterMs = performance.now() - killed;
    assertEquals([row?.status, row?.end_reason], ["failed", "worker_lost"]);
    assert(afterMs >= (stale - 2) * 1000, `failed ${Math.round(afterMs)} ms after the kill`);

    const [node] = await api.db.sql`select active_calls from worker_nodes where id = 'node-doomed'`;
    assertEquals(node.active_calls, 0, "the slot is given back");
    const [usage] = await api.db
      .sql`select call_seconds from usage where session_id = ${sessionId}`;
    const seconds = Number(usage.call_seconds);
    assert(seconds > 0 && seconds < 10, `booked ${seconds} s up to the last heartbeat`);
  } finally {
    await caller?.hangUp();
    await api.close();
  }
});
