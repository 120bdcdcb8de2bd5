// POST /api/v1/calls.dial (issue 34) against the real API and database: every refusal answers
// its status and code and writes nothing; a dial reserves an outbound session on a SIP node and
// posts the WorkerDial to a fake worker standing in for the node's dial route (the real route is
// media's), which receives the trunk's password opened and a token for that node; a worker that
// refuses or does not answer leaves the session failed with the reason.
import { assert, assertEquals } from "./helpers/assert.ts";
import { makeTenant, rowCounts, startTestApi, type TestApi } from "./helpers/api_server.ts";
import { registerNode } from "../db/nodes.ts";
import { TokenVerifier } from "../common/token.ts";
import { signingJwk } from "../db/signing_key.ts";
import { importSealingKey, newSealingKeyText } from "../common/sealed.ts";
import type { WorkerDial } from "../common/dial.ts";
import { signIn } from "./helpers/console_client.ts";

const PASSWORD = "carrier-secret-42";

/** The fake worker: records each dial it is posted and answers as `mode` says. */
function fakeWorker() {
  const received: { path: string; auth: string | null; body: WorkerDial }[] = [];
  let mode: "accept" | "refuse" | "hang" = "accept";
  let release = () => {};
  const hung = new Promise<void>((r) => release = r);
  const ac = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen: () => {} },
    async (req) => {
      const path = new URL(req.url).pathname;
      const body = await req.json();
      received.push({ path, auth: req.headers.get("authorization"), body });
      if (mode === "hang") await hung;
      if (mode === "refuse") {
        return Response.json(
          { error: { code: "trunk_unreachable", message: "the trunk did not answer" } },
          { status: 409 },
        );
      }
      return Response.json({ session_id: path.split("/")[3] }, { status: 202 });
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    received,
    setMode: (m: typeof mode) => mode = m,
    close: async () => {
      release();
      ac.abort();
      await server.finished;
    },
  };
}

async function expectRefused(
  api: TestApi,
  auth: string,
  body: Record<string, unknown>,
  status: number,
  code: string,
  field?: string,
) {
  const before = await rowCounts(api.db);
  const r = await api.post("/api/v1/calls.dial", body, auth);
  assertEquals([r.status, r.body?.error?.code], [status, code], JSON.stringify(r.body));
  if (field !== undefined) assertEquals(r.body.error.details.field, field);
  assertEquals(await rowCounts(api.db), before, `${code} wrote nothing`);
  return r;
}

Deno.test("calls.dial refuses what it cannot place and writes nothing, then dials through a SIP worker", async () => {
  const keyText = newSealingKeyText();
  const api = await startTestApi({ TRUNK_CREDENTIALS_KEY: keyText }, { node: false });
  const worker = fakeWorker();
  try {
    await registerNode(api.db.sql, {
      node_id: "web-only",
      offer_base_url: "http://127.0.0.1:9/w",
      capacity: 10,
    });
    const acme = await makeTenant(api, "acme");
    const other = await makeTenant(api, "other");
    const trunk = await api.admin("/api/v1/trunks.create", {
      name: "carrier",
      allowed_sources: ["203.0.113.0/24"],
      outbound_address: "sip.carrier.test",
      outbound_transport: "tcp",
      outbound_username: "acme-out",
      outbound_password: PASSWORD,
    });
    assertEquals(trunk.status, 200, JSON.stringify(trunk.body));
    const trunkId = trunk.body.trunk.trunk_id;
    const inboundOnly = await api.admin("/api/v1/trunks.create", {
      name: "inbound only",
      allowed_sources: ["198.51.100.7"],
    });
    const unused = await api.admin("/api/v1/trunks.create", {
      name: "someone else's",
      allowed_sources: ["198.51.100.8"],
      outbound_address: "10.0.0.1:5080",
    });
    const numbers: [string, string, string | null][] = [
      ["+14155550100", acme.agent_id, trunkId],
      ["+14155550101", acme.agent_id, null],
      ["+14155550102", acme.agent_id, inboundOnly.body.trunk.trunk_id],
      ["+14155550199", other.agent_id, trunkId],
    ];
    for (const [number, agent_id, trunk_id] of numbers) {
      const made = await api.admin("/api/v1/numbers.create", { number, agent_id, trunk_id });
      assertEquals(made.status, 200, JSON.stringify(made.body));
    }
    const dial = { agent_id: acme.agent_id, to: "+442071838750", from: "+14155550100" };

    // Who may dial: a publishable key never; no key or a bad one is 401.
    const pk = await expectRefused(api, acme.pk, dial, 403, "publishable_key_cannot_dial");
    assert(/secret key/.test(pk.body.error.message));
    await expectRefused(api, "sk_" + "x".repeat(32), dial, 401, "invalid_api_key");

    // The request: each refusal names its field.
    await expectRefused(
      api,
      acme.sk,
      { ...dial, to: "442071838750" },
      400,
      "invalid_request",
      "to",
    );
    await expectRefused(
      api,
      acme.sk,
      { ...dial, from: "+0415555" },
      400,
      "invalid_request",
      "from",
    );
    await expectRefused(
      api,
      acme.sk,
      { ...dial, ring_timeout_seconds: 3 },
      400,
      "invalid_request",
      "ring_timeout_seconds",
    );
    await expectRefused(
      api,
      acme.sk,
      { ...dial, machine_detection: "maybe" },
      400,
      "invalid_request",
      "machine_detection",
    );
    await expectRefused(
      api,
      acme.sk,
      { ...dial, metadata: { phone_to: "+1" } },
      400,
      "invalid_request",
      "metadata.phone_to",
    );
    await expectRefused(api, acme.sk, { ...dial, colour: "red" }, 400, "invalid_request", "colour");

    // The agent, the number and the trunk.
    await expectRefused(
      api,
      acme.sk,
      { ...dial, agent_id: other.agent_id },
      404,
      "agent_not_found",
    );
    await expectRefused(api, acme.sk, { ...dial, agent_id: "agt_nope" }, 404, "agent_not_found");
    await expectRefused(
      api,
      api.adminToken,
      { ...dial, agent_id: "agt_nope" },
      404,
      "agent_not_found",
    );
    await expectRefused(
      api,
      acme.sk,
      { ...dial, from: "+14155550177" },
      400,
      "from_not_owned",
      "from",
    );
    await expectRefused(
      api,
      acme.sk,
      { ...dial, from: "+14155550199" },
      400,
      "from_not_owned",
      "from",
    );
    await expectRefused(
      api,
      acme.sk,
      { ...dial, from: "+14155550101" },
      400,
      "no_trunk",
      "trunk_id",
    );
    await expectRefused(
      api,
      acme.sk,
      { ...dial, from: "+14155550102" },
      400,
      "trunk_not_outbound",
      "trunk_id",
    );
    await expectRefused(
      api,
      acme.sk,
      { ...dial, trunk_id: unused.body.trunk.trunk_id },
      404,
      "trunk_not_found",
      "trunk_id",
    );

    // Sealed credentials that this key does not open (or no key): a 500 naming the variable.
    const key = api.deps.trunkKey;
    api.deps.trunkKey = await importSealingKey(newSealingKeyText());
    const wrong = await expectRefused(api, acme.sk, dial, 500, "trunk_credentials_unreadable");
    assert(wrong.body.error.message.includes("TRUNK_CREDENTIALS_KEY"));
    api.deps.trunkKey = undefined;
    await expectRefused(api, acme.sk, dial, 500, "trunk_credentials_unreadable");
    api.deps.trunkKey = key;

    // Only a web node is live: no SIP node can place the call, 503 with Retry-After.
    const none = await expectRefused(api, acme.sk, dial, 503, "no_sip_worker");
    assertEquals(none.headers.get("retry-after"), "5");

    // A SIP node whose dial route is the fake worker.
    await registerNode(api.db.sql, {
      node_id: "sip-node",
      offer_base_url: `${worker.url}/worker/`,
      capacity: 10,
      sip_address: "127.0.0.1",
      sip_port: 5999,
    });
    const placed = await api.post("/api/v1/calls.dial", {
      ...dial,
      machine_detection: "hang_up",
      metadata: { order: "A-17" },
    }, acme.sk);
    assertEquals(placed.status, 202, JSON.stringify(placed.body));
    assertEquals(placed.body.status, "dialing");
    const sessionId = placed.body.session_id;
    assertEquals(worker.received.length, 1);
    const got = worker.received[0];
    assertEquals(got.path, `/worker/sessions/${sessionId}/dial`);
    assertEquals(got.body, {
      to: "+442071838750",
      from: "+14155550100",
      trunk: {
        trunk_id: trunkId,
        address: "sip.carrier.test:5060",
        transport: "tcp",
        username: "acme-out",
        password: PASSWORD,
      },
      ring_timeout_seconds: 30,
      machine_detection: "hang_up",
    });
    const verifier = await TokenVerifier.fromJwk(await signingJwk(api.db, api.settings));
    const claims = await verifier.verify(got.auth!.replace(/^Bearer /, ""), "sip-node");
    assertEquals([claims.sid, claims.sub, claims.ten], [
      sessionId,
      acme.agent_id,
      acme.workspace_id,
    ]);
    const [row] = await api.db.sql`select status, direction, dial_state, key_id, metadata,
        phone_trunk_id, node_id from sessions where id = ${sessionId}`;
    assertEquals(row, {
      status: "created",
      direction: "outbound",
      dial_state: "dialing",
      key_id: acme.sk_key_id,
      metadata: { order: "A-17", phone_from: "+14155550100", phone_to: "+442071838750" },
      phone_trunk_id: trunkId,
      node_id: "sip-node",
    });
    const shown = await api.post("/api/v1/sessions.get", { session_id: sessionId }, acme.sk);
    assertEquals([shown.body.direction, shown.body.dial_state], ["outbound", "dialing"]);
    const page = await (await signIn(api)).get(`/console/sessions/${sessionId}`);
    assert(page.html.includes("outbound (placed by the service): dialing"), page.html);

    // The worker refuses: 502 dial_failed, the session failed and its slot given back.
    worker.setMode("refuse");
    const refused = await api.post("/api/v1/calls.dial", dial, api.adminToken);
    assertEquals([refused.status, refused.body.error.code], [502, "dial_failed"]);
    assert(refused.body.error.message.includes("the trunk did not answer"));
    assertEquals(refused.body.error.details.worker_code, "trunk_unreachable");
    const failedId = refused.body.error.details.session_id;
    const [failed] = await api.db.sql`select status, end_reason, holds_slot, key_id
      from sessions where id = ${failedId}`;
    assertEquals(failed, {
      status: "failed",
      end_reason: "dial_failed",
      holds_slot: false,
      key_id: null,
    });

    // The worker does not answer in time: 503 worker_unreachable, the session failed.
    worker.setMode("hang");
    api.deps.dialTimeoutMs = 300;
    const silent = await api.post("/api/v1/calls.dial", dial, acme.sk);
    assertEquals([silent.status, silent.body.error.code], [503, "worker_unreachable"]);
    const [lost] = await api.db.sql`select status, end_reason from sessions
      where id = ${silent.body.error.details.session_id}`;
    assertEquals(lost, { status: "failed", end_reason: "worker_unreachable" });
    const [node] = await api.db.sql`select active_calls from worker_nodes where id = 'sip-node'`;
    assertEquals(node.active_calls, 1, "only the dial the worker took holds a slot");
  } finally {
    await worker.close();
    await api.close();
  }
});
