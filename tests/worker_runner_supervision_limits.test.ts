// The supervisor of a multi-runner worker does not restart a runner forever, and its runners do
// not outlive it: a runner that cannot start is tried MAX_RESTARTS times more within the minute,
// then left down (the node exits 1 once no runner is left, so its orchestrator restarts it); and
// runners whose supervisor was killed drain and exit on their own.
import { assert, assertEquals, assertMatch } from "./helpers/assert.ts";
import { startTestApi } from "./helpers/api_server.ts";
import { freePortRun, spawnDeno, startWorkerNodeProcess } from "./helpers/process.ts";
import { MAX_RESTARTS } from "../media/node/runners.ts";

function alive(pid: number): boolean {
  try {
    Deno.kill(pid, "SIGCONT"); // delivers nothing harmful; throws once the process is gone
    return true;
  } catch {
    return false;
  }
}

Deno.test("a runner that keeps dying is left down and the node exits 1", async () => {
  const api = await startTestApi({}, { node: false });
  const port = freePortRun(2);
  // An engine the speech config cannot start: every runner exits 3 as it starts.
  const child = spawnDeno("media/main.ts", {
    DATABASE_URL: api.db.url,
    WORKER_PROCESSES: "2",
    WORKER_PORT: String(port),
    NODE_ID: "node-broken",
    SPEECH_ENGINES: '{"recognition":["no-such-engine"]}',
  });
  try {
    const status = await Promise.race([
      child.process.status,
      new Promise<never>((_, no) => setTimeout(() => no(new Error(child.output())), 60_000)),
    ]);
    const out = child.output();
    assertEquals(status.code, 1, out);
    for (const runner of [0, 1]) {
      const starts = out.match(new RegExp(`runner started runner=${runner} `, "g")) ?? [];
      assertEquals(starts.length, MAX_RESTARTS + 1, `runner ${runner} starts:\n${out}`);
      assertMatch(out, new RegExp(`runner keeps dying; left down runner=${runner}`));
    }
    // The runner's own complaint reaches the supervisor's output, tagged with its index.
    assertMatch(out, /\[runner [01]\] The speech engines could not start|unknown engine/);
    const nodes = await api.db.sql`select id from worker_nodes`;
    assertEquals(nodes.length, 0, "no runner registered");
  } finally {
    await child.stop("SIGKILL");
    await api.close();
  }
});

Deno.test("runners drain and exit when their supervisor is killed", async () => {
  const api = await startTestApi({}, { node: false });
  const node = await startWorkerNodeProcess(api.db.url, 2, "node-orphaned");
  try {
    const pids = [node.runnerPid(0)!, node.runnerPid(1)!];
    assert(pids.every((p) => p && alive(p)), node.child.output());
    await node.stop("SIGKILL");
    const end = performance.now() + 15_000;
    while (performance.now() < end && pids.some(alive)) {
      await new Promise((r) => setTimeout(r, 100));
    }
    assertEquals(pids.filter(alive), [], "no runner outlives its supervisor");
    // They drained (no call was in flight) rather than died: their rows are marked draining.
    const rows = await api.db.sql`select id from worker_nodes where draining order by id`;
    assertEquals(rows.map((r) => r.id), ["node-orphaned-r0", "node-orphaned-r1"]);
  } finally {
    await node.stop("SIGKILL").catch(() => {});
    await api.close();
  }
});
