// Node choice: the least loaded live node with room; the reservation is taken with the session
// row, so concurrent connects never overbook a node.
import { assert, assertEquals } from "./helpers/assert.ts";
import { makeTenant, startTestApi } from "./helpers/api_server.ts";
import { registerNode } from "../db/nodes.ts";
import { finishSession } from "../db/sessions.ts";

const CONNECT = "/api/v1/sessions.connect";

Deno.test("connect picks the least loaded live node and reserves a slot", async () => {
  const api = await startTestApi({}, { node: false });
  const acme = await makeTenant(api);
  await registerNode(api.db.sql, {
    node_id: "a",
    offer_base_url: "http://127.0.0.1:1001",
    capacity: 4,
  });
  await registerNode(api.db.sql, {
    node_id: "b",
    offer_base_url: "http://127.0.0.1:1002",
    capacity: 4,
  });
  await api.db.sql`update worker_nodes set active_calls = 2 where id = 'a'`;
  const chosen: string[] = [];
  for (let i = 0; i < 4; i++) {
    const r = await api.post(CONNECT, { agent_id: acme.agent_id }, acme.sk);
    assertEquals(r.status, 200);
    chosen.push(new URL(r.body.webrtc_request_params.endpoint).port);
  }
  // b starts empty, so it takes the first two; then they are level and alternate by load.
  assertEquals(chosen.slice(0, 2), ["1002", "1002"]);
  assertEquals(chosen.slice(2).sort(), ["1001", "1002"]);
  const loads = await api.db.sql`select id, active_calls from worker_nodes order by id`;
  assertEquals(loads.map((r) => [r.id, r.active_calls]), [["a", 3], ["b", 3]]);
  await api.close();
});

Deno.test("concurrent connects never overbook a node's capacity", async () => {
  const api = await startTestApi({ RATE_LIMIT_PER_SECOND: "0" }, { node: false });
  const acme = await makeTenant(api);
  await registerNode(api.db.sql, {
    node_id: "small",
    offer_base_url: "http://127.0.0.1:1",
    capacity: 5,
  });
  const replies = await Promise.all(
    [...Array(20)].map(() => api.post(CONNECT, { agent_id: acme.agent_id }, acme.sk)),
  );
  const ok = replies.filter((r) => r.status === 200);
  assertEquals(ok.length, 5);
  // The rest find the node full: 503 workers_full, a passing condition (never a 500).
  assert(replies.every((r) => r.status === 200 || r.body.error.code === "workers_full"));
  const [node] = await api.db.sql`select active_calls from worker_nodes where id = 'small'`;
  assertEquals(node.active_calls, 5);
  const [counts] = await api.db.sql`select
    count(*) filter (where status = 'created')::int as created,
    count(*) filter (where status = 'failed')::int as failed,
    (select count(*)::int from usage) as usage from sessions`;
  assertEquals(counts, { created: 5, failed: 0, usage: 5 }, "a full fleet's 503 writes nothing");

  // Ending a session frees its slot for the next caller.
  assertEquals(await finishSession(api.db.sql, ok[0].body.session_id, "ended", "hangup"), true);
  assertEquals(await finishSession(api.db.sql, ok[0].body.session_id, "ended", "hangup"), false);
  assertEquals((await api.post(CONNECT, { agent_id: acme.agent_id }, acme.sk)).status, 200);
  await api.close();
});
