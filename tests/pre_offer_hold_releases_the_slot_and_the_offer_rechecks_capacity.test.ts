// A connect holds its node slot only PRE_OFFER_HOLD_SECONDS while no offer comes; then the slot
// goes back to the node though the token stays valid. A later offer with that token takes a slot
// again if the node has room, and is refused 503 node_full (a 5xx: the client may retry while
// its token lasts) if it has none.
import { assert, assertEquals } from "./helpers/assert.ts";
import { makeTenant, startTestApi, type TestApi } from "./helpers/api_server.ts";
import { startWorkerProcess, type WorkerProcess } from "./helpers/process.ts";
import { CallerHttpError, TestCaller } from "../caller/caller.ts";

const CONNECT = "/api/v1/sessions.connect";

async function waitFor(what: string, ms: number, check: () => Promise<boolean>) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

Deno.test("the pre-offer hold gives the slot back and a late offer rechecks capacity", async (t) => {
  // A 1 s hold (the sweeper runs every 200 ms in tests) on a worker with room for one call.
  const api: TestApi = await startTestApi({ PRE_OFFER_HOLD_SECONDS: "1" }, { node: false });
  let worker: WorkerProcess | undefined;
  const callers: TestCaller[] = [];
  try {
    worker = await startWorkerProcess(api.db.url, "node-one-slot", { WORKER_CAPACITY: "1" });
    const acme = await makeTenant(api, "acme", { brain_url: "echo:" });
    const load = async () =>
      (await api.db.sql`select active_calls from worker_nodes where id = 'node-one-slot'`)[0]
        .active_calls as number;
    const statusOf = async (id: string) =>
      (await api.db.sql`select status, holds_slot from sessions where id = ${id}`)[0];
    const connect = async () => {
      const r = await api.post(CONNECT, { agent_id: acme.agent_id }, acme.sk);
      assertEquals(r.status, 200, JSON.stringify(r.body));
      return {
        id: r.body.session_id as string,
        offerUrl: r.body.webrtc_request_params.endpoint as string,
        headers: r.body.webrtc_request_params.headers as Record<string, string>,
      };
    };
    const lapsed = (id: string) =>
      waitFor("the hold to lapse", 5000, async () => !(await statusOf(id)).holds_slot);

    await t.step("the slot goes back after the hold; the token still starts a call", async () => {
      const late = await connect();
      assertEquals(await load(), 1);
      const started = Date.now();
      await lapsed(late.id);
      assert(Date.now() - started >= 500, "not released before its hold ended");
      assertEquals(await load(), 0);
      assertEquals(await statusOf(late.id), { status: "created", holds_slot: false });

      const caller = await TestCaller.connect(late);
      callers.push(caller);
      await caller.ready();
      assertEquals(await load(), 1, "the offer took the slot again");
      assertEquals((await statusOf(late.id)).holds_slot, true);
      await caller.hangUp();
      await waitFor("the call to end", 8000, async () => (await load()) === 0);
    });

    await t.step(
      "a late offer on a full node: 503 node_full, and it works once there is room",
      async () => {
        const late = await connect();
        await lapsed(late.id);
        // Someone else takes the only slot and starts a call in it.
        const other = await connect();
        const busy = await TestCaller.connect(other);
        callers.push(busy);
        await busy.ready();
        assertEquals(await load(), 1);

        const err = await TestCaller.connect(late).then(() => undefined, (e) => e);
        assert(err instanceof CallerHttpError, String(err));
        assertEquals(err.status, 503);
        const body = JSON.parse(err.body);
        assertEquals(body.error.code, "node_full");
        assertEquals(body.info, body.error.message);
        assert(typeof body.correlation_id === "string");
        assertEquals(await statusOf(late.id), { status: "created", holds_slot: false });
        assertEquals(await load(), 1, "the refusal took nothing");

        await busy.hangUp();
        await waitFor("the other call to end", 8000, async () => (await load()) === 0);
        const caller = await TestCaller.connect(late);
        callers.push(caller);
        await caller.ready();
        assertEquals(await load(), 1);
        assertEquals((await statusOf(late.id)).status !== "created", true);
      },
    );

    await t.step("a lapsed session that expires gives nothing back twice", async () => {
      for (const c of callers) await c.hangUp();
      await waitFor("the calls to end", 8000, async () => (await load()) === 0);
      const late = await connect();
      await lapsed(late.id);
      await api.db.sql`update sessions set token_expires_at = now() - interval '1 second'
        where id = ${late.id}`;
      await waitFor(
        "the session to expire",
        5000,
        async () => (await statusOf(late.id)).status === "expired",
      );
      assertEquals(await load(), 0);
      // The slot is free for the next caller.
      const next = await connect();
      assertEquals(await load(), 1);
      assertEquals((await statusOf(next.id)).holds_slot, true);
    });
  } finally {
    for (const c of callers) await c.hangUp();
    await worker?.stop();
    await api.close();
  }
});
