// SIGTERM on a worker drains it: the node takes no new calls at once (a new connect goes to the
// other worker), the call in flight goes on until DRAIN_TIMEOUT_SECONDS, then ends `ended` /
// `worker_shutdown`, and the process exits 0. A drain with no call left exits at once.
import { assert, assertEquals } from "./helpers/assert.ts";
import { makeTenant, startTestApi, type TestApi } from "./helpers/api_server.ts";
import { startWorkerProcess } from "./helpers/process.ts";
import { TestCaller } from "../caller/caller.ts";

async function sessionRow(api: TestApi, id: string) {
  const [row] = await api.db.sql`select status, end_reason, node_id from sessions where id = ${id}`;
  return row as { status: string; end_reason: string | null; node_id: string };
}

async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<T> {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what}: not within ${ms} ms`);
}

Deno.test("a worker drains its calls on SIGTERM, then exits 0", async () => {
  const api = await startTestApi({}, { node: false });
  const draining = await startWorkerProcess(api.db.url, "node-draining", {
    DRAIN_TIMEOUT_SECONDS: "4",
  });
  const acme = await makeTenant(api, "acme", { brain_url: "echo:" });
  const connect = () => api.post("/api/v1/sessions.connect", { agent_id: acme.agent_id }, acme.sk);
  let caller: TestCaller | undefined;
  let other: Awaited<ReturnType<typeof startWorkerProcess>> | undefined;
  try {
    const r = await connect();
    assertEquals(r.status, 200);
    caller = await TestCaller.connect({
      offerUrl: r.body.webrtc_request_params.endpoint,
      headers: r.body.webrtc_request_params.headers,
    });
    await caller.ready();
    const sessionId = r.body.session_id as string;
    await until(
      "the call is active",
      5_000,
      async () => (await sessionRow(api, sessionId)).status === "active" ? true : undefined,
    );

    other = await startWorkerProcess(api.db.url, "node-other");
    const signalled = performance.now();
    draining.child.process.kill("SIGTERM");
    const exited = draining.child.process.status;

    // At once: the node is draining, not ready, and new calls go to the other node.
    await until("node marked draining", 1_500, async () => {
      const [n] = await api.db.sql`select draining from worker_nodes where id = 'node-draining'`;
      return n.draining ? true : undefined;
    });
    const ready = await fetch(`${draining.url}/readyz`);
    await ready.body?.cancel();
    assertEquals(ready.status, 503, "a draining worker is not ready");
    const next = await connect();
    assertEquals([next.status, (await sessionRow(api, next.body.session_id)).node_id], [
      200,
      "node-other",
    ]);

    // The call in flight goes on through the drain...
    await new Promise((res) => setTimeout(res, 2_000));
    assertEquals((await sessionRow(api, sessionId)).status, "active", "the call goes on");
    const left = (m: { type: string; message?: unknown }) =>
      m.type === "signalling" && (m.message as { type?: string })?.type === "peerLeft";
    assert(!caller.messages.some(left), "the page was not told the bot left during the drain");

    // ...and ends at its deadline with worker_shutdown; the process exits 0.
    const row = await until("the call ends", 8_000, async () => {
      const s = await sessionRow(api, sessionId);
      return s.status === "active" ? undefined : s;
    });
    const endedAfter = performance.now() - signalled;
    assertEquals([row.status, row.end_reason], ["ended", "worker_shutdown"]);
    assert(endedAfter >= 3_900, `ended ${Math.round(endedAfter)} ms after SIGTERM, before 4 s`);
    assert(caller.messages.some(left), "the page is told the bot left at the deadline");
    assertEquals((await exited).code, 0, draining.child.output());
  } finally {
    await caller?.hangUp();
    await draining.stop("SIGKILL").catch(() => {});
    await other?.stop();
    await api.close();
  }
});

Deno.test("a worker with no call in flight exits at once on SIGTERM", async () => {
  const api = await startTestApi({}, { node: false });
  const worker = await startWorkerProcess(api.db.url, "node-idle", {
    DRAIN_TIMEOUT_SECONDS: "600",
  });
  try {
    const t0 = performance.now();
    const status = await worker.stop("SIGTERM");
    const ms = performance.now() - t0;
    assertEquals(status.code, 0, worker.child.output());
    assert(ms < 5_000, `an idle worker took ${Math.round(ms)} ms to stop`);
  } finally {
    await api.close();
  }
});
