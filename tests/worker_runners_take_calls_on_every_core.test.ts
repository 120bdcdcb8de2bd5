// One `deno task worker` with WORKER_PROCESSES=2 runs two call runners, each its own registered
// node (`${NODE_ID}-r0`, `-r1`) on its own port: calls land on both, a runner killed mid-call
// fails only its own call (the other runner's call goes on, its audio still echoing), the
// supervisor starts it again and it registers again and takes calls; SIGTERM drains both.
import { assert, assertEquals } from "./helpers/assert.ts";
import { makeTenant, startTestApi, type TestApi } from "./helpers/api_server.ts";
import { startWorkerNodeProcess } from "./helpers/process.ts";
import { echoLoudness } from "./helpers/live_call.ts";
import { TestCaller } from "../caller/caller.ts";
import { threadNames } from "../common/thread_name.ts";

async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<T> {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what}: not within ${ms} ms`);
}

async function session(api: TestApi, id: string) {
  const [row] = await api.db.sql`select status, end_reason, node_id from sessions where id = ${id}`;
  return row as { status: string; end_reason: string | null; node_id: string };
}

Deno.test("a two-runner worker takes calls on both runners and a runner's crash fails only its calls", async () => {
  const api = await startTestApi({ NODE_STALE_SECONDS: "3" }, { node: false });
  const acme = await makeTenant(api, "acme", { brain_url: "echo:" });
  // WORKER_CAPACITY is the node's: 2 calls split as 1 per runner, so two calls take one each.
  const node = await startWorkerNodeProcess(api.db.url, 2, "node-multi", {
    WORKER_CAPACITY: "2",
  });
  const callers: TestCaller[] = [];
  const call = async () => {
    const r = await api.post("/api/v1/sessions.connect", { agent_id: acme.agent_id }, acme.sk);
    assertEquals(r.status, 200, JSON.stringify(r.body));
    const caller = await TestCaller.connect({
      offerUrl: r.body.webrtc_request_params.endpoint,
      headers: r.body.webrtc_request_params.headers,
    });
    callers.push(caller);
    await caller.ready();
    const id = r.body.session_id as string;
    await until(
      "the call is active",
      5_000,
      async () => (await session(api, id)).status === "active" ? true : undefined,
    );
    return { caller, id, endpoint: r.body.webrtc_request_params.endpoint as string };
  };
  try {
    const nodes = await api.db.sql`select id, offer_base_url, capacity from worker_nodes
      order by id`;
    assertEquals(
      nodes.map((n) => [n.id, n.offer_base_url, n.capacity]),
      node.runners.map((r) => [r.nodeId, r.url, 1]),
      "each runner is a node of its own, on its own port, with its share of the capacity",
    );

    const first = await call();
    const second = await call();
    const byNode = new Map([
      [(await session(api, first.id)).node_id, first],
      [(await session(api, second.id)).node_id, second],
    ]);
    assertEquals([...byNode.keys()].sort(), ["node-multi-r0", "node-multi-r1"]);
    for (const [nodeId, c] of byNode) {
      const runner = node.runners.find((r) => r.nodeId === nodeId)!;
      assert(c.endpoint.startsWith(`${runner.url}/`), `${c.endpoint} is ${nodeId}'s`);
    }
    const survivor = byNode.get("node-multi-r0")!;
    const victim = byNode.get("node-multi-r1")!;

    const pid = node.runnerPid(1);
    assert(pid !== undefined, node.child.output());
    // Runners share the cores: one recognition thread each (where Linux names threads).
    const names = [...threadNames(pid).values()];
    if (names.length) assertEquals(names.filter((n) => n === "recognition").length, 1);
    const [before] = await api.db.sql`select started_at from worker_nodes
      where id = 'node-multi-r1'`;
    Deno.kill(pid, "SIGKILL");

    // The killed runner's call fails: `worker_restarted` when the runner comes back first (it
    // re-registers the same node id), `worker_lost` when its heartbeat goes stale first.
    const lost = await until("the killed runner's call fails", 15_000, async () => {
      const s = await session(api, victim.id);
      return s.status === "active" ? undefined : s;
    });
    assertEquals(lost.status, "failed");
    assert(["worker_restarted", "worker_lost"].includes(lost.end_reason!), lost.end_reason!);

    // The other runner's call is untouched: still active, and its audio still comes back.
    assertEquals((await session(api, survivor.id)).status, "active");
    assert(await echoLoudness(survivor.caller) > 500, "the surviving call still echoes");

    // The supervisor started runner 1 again: a new process, registered again, taking calls
    // (runner 0 is full, so the next call can only land there).
    await until("runner 1 registers again", 30_000, async () => {
      const [row] = await api.db.sql`select started_at, draining from worker_nodes
        where id = 'node-multi-r1'`;
      return row.started_at > before.started_at && !row.draining ? true : undefined;
    });
    const again = node.runnerPid(1);
    assert(again !== undefined && again !== pid, `runner 1 is a new process (${again})`);
    const third = await call();
    assertEquals((await session(api, third.id)).node_id, "node-multi-r1");
    assertEquals((await session(api, survivor.id)).status, "active");

    // SIGTERM drains every runner (DRAIN_TIMEOUT_SECONDS=2): both calls end worker_shutdown, and
    // the supervisor exits 0.
    const status = await node.stop("SIGTERM");
    assertEquals(status.code, 0, node.child.output());
    for (const c of [survivor, third]) {
      const s = await session(api, c.id);
      assertEquals([s.status, s.end_reason], ["ended", "worker_shutdown"]);
    }
    const draining = await api.db.sql`select id from worker_nodes where draining order by id`;
    assertEquals(draining.map((n) => n.id), ["node-multi-r0", "node-multi-r1"]);
    assert(/runner=1/.test(node.child.output()), "runner log lines carry the runner index");
  } finally {
    for (const c of callers) await c.hangUp().catch(() => {});
    await node.stop("SIGKILL").catch(() => {});
    await api.close();
  }
});
