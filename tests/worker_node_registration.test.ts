// The real worker process registers its node and heartbeats it; connect chooses it while it is
// alive, never once it drains on shutdown, and never once its heartbeat goes stale.
import { assertEquals } from "./helpers/assert.ts";
import { makeTenant, startTestApi } from "./helpers/api_server.ts";
import { freePort, spawnDeno, waitHealthy } from "./helpers/process.ts";

const CONNECT = "/api/v1/sessions.connect";

function startWorker(dbUrl: string, nodeId: string) {
  const port = freePort();
  const child = spawnDeno("media/main.ts", {
    DATABASE_URL: dbUrl,
    WORKER_PORT: String(port),
    NODE_ID: nodeId,
    WORKER_PUBLIC_URL: `http://127.0.0.1:${port}`,
  });
  return { child, port, url: `http://127.0.0.1:${port}` };
}

Deno.test("a worker node is chosen while alive and not after it stops", async (t) => {
  const api = await startTestApi({ NODE_STALE_SECONDS: "3" }, { node: false });
  const acme = await makeTenant(api);
  const connect = () => api.post(CONNECT, { agent_id: acme.agent_id }, acme.sk);

  await t.step("a running worker is chosen, its offer URL in the answer", async () => {
    const w = startWorker(api.db.url, "node-live");
    try {
      await waitHealthy(`${w.url}/healthz`, w.child);
      let r = await connect();
      for (let i = 0; i < 50 && r.status !== 200; i++) {
        await new Promise((res) => setTimeout(res, 100)); // registration lands just after listen
        r = await connect();
      }
      assertEquals(r.status, 200);
      assertEquals(
        r.body.webrtc_request_params.endpoint,
        `${w.url}/sessions/${r.body.session_id}/offer`,
      );
    } finally {
      await w.child.stop("SIGTERM");
    }
    // A clean stop marks the node draining: it is not chosen again.
    const r = await connect();
    assertEquals([r.status, r.body.error?.code], [500, "missing_connect_params"]);
  });

  await t.step("a killed worker's stale heartbeat keeps it from being chosen", async () => {
    const w = startWorker(api.db.url, "node-killed");
    await waitHealthy(`${w.url}/healthz`, w.child);
    let r = await connect();
    for (let i = 0; i < 50 && r.status !== 200; i++) {
      await new Promise((res) => setTimeout(res, 100));
      r = await connect();
    }
    assertEquals(r.status, 200);
    await w.child.stop("SIGKILL");
    await new Promise((res) => setTimeout(res, 3500));
    r = await connect();
    assertEquals([r.status, r.body.error?.code], [500, "missing_connect_params"]);
  });

  await api.close();
});
