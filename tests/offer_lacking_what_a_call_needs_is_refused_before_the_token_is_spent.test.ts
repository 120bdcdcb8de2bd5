// An offer the call could never connect with (no DTLS fingerprint, a browser offer cut in the
// middle of a line so its data channel section is gone, no ICE password) is refused by the
// worker's offer endpoint with 400 invalid_sdp naming what is missing, before the token is
// spent: the session row and the node's slots are as they were, no call starts, and a correct
// offer with the same token then connects. (It was a 200 that spent the token and held the slot
// until the call failed connect_timeout 20 s later.)
import { assert, assertEquals } from "./helpers/assert.ts";
import { makeTenant, readReply, startTestApi } from "./helpers/api_server.ts";
import { startWorkerProcess, type WorkerProcess } from "./helpers/process.ts";
import { TestCaller } from "../caller/caller.ts";
import { makeBaseOffer } from "../bench/fuzz/gen/offer.ts";

const without = (sdp: string, prefix: string) =>
  sdp.split("\r\n").filter((l) => !l.startsWith(prefix)).join("\r\n");

Deno.test("an offer lacking what a call needs is refused before the token is spent", async () => {
  const api = await startTestApi({}, { node: false });
  let worker: WorkerProcess | undefined;
  let caller: TestCaller | undefined;
  try {
    worker = await startWorkerProcess(api.db.url, "node-sdp");
    const acme = await makeTenant(api, "acme", { brain_url: "echo:" });
    const r = await api.post("/api/v1/sessions.connect", { agent_id: acme.agent_id }, acme.sk);
    assertEquals(r.status, 200, JSON.stringify(r.body));
    const sessionId: string = r.body.session_id;
    const endpoint: string = r.body.webrtc_request_params.endpoint;
    const auth: string = r.body.webrtc_request_params.headers.Authorization;

    const sessionRow = async () =>
      (await api.db.sql`select status, token_id, holds_slot, hold_until, connected_at
        from sessions where id = ${sessionId}`)[0];
    const nodeRow = async () =>
      (await api.db.sql`select active_calls from worker_nodes where id = ${worker!.nodeId}`)[0];
    const session = await sessionRow();
    const node = await nodeRow();

    // The offer the test caller (shaped as the Pipecat client's) sends, trickled.
    const real = (await makeBaseOffer()).trickled;
    const appAt = real.indexOf("m=application");
    assert(appAt > 0 && real.includes("a=fingerprint:") && real.includes("a=ice-pwd:"));
    const bad: [string, string, RegExp][] = [
      ["no fingerprint", without(real, "a=fingerprint:"), /has no a=fingerprint/],
      ["cut mid-line", real.slice(0, appAt - 9), /no data channel \(m=application/],
      ["no ICE password", without(real, "a=ice-pwd:"), /has no a=ice-pwd/],
    ];
    for (const [what, sdp, names] of bad) {
      const res = await readReply(
        await fetch(endpoint, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: auth },
          body: JSON.stringify({ sdp, type: "offer", pc_id: null, restart_pc: false }),
        }),
      );
      assertEquals([res.status, res.body?.error?.code], [400, "invalid_sdp"], what);
      assert(names.test(res.body.error.message), `${what}: ${res.body.error.message}`);
      assertEquals(await sessionRow(), session, `${what}: the session row is unchanged`);
      assertEquals(await nodeRow(), node, `${what}: no slot taken on the node`);
      const health = await (await fetch(`${worker.url}/healthz`)).json();
      assertEquals(health.calls, 0, `${what}: no call started`);
    }

    // The token is still good for a correct offer.
    caller = await TestCaller.connect({ offerUrl: endpoint, headers: { Authorization: auth } });
    await caller.ready();
    const spent = (await sessionRow()).status;
    assert(spent === "connecting" || spent === "active", spent);
  } finally {
    await caller?.hangUp();
    await worker?.stop();
    await api.close();
  }
});
