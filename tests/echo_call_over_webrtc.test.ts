// A whole echo call through the real service: sessions.connect, the offer to the chosen worker
// process, RTVI readiness, paced silence from DTLS up, the caller's own speech coming back, and
// hang-up recorded on the session.
import { assert, assertEquals } from "./helpers/assert.ts";
import { makeTenant, startTestApi } from "./helpers/api_server.ts";
import { startWorkerProcess } from "./helpers/process.ts";
import { speechWav } from "./helpers/audio.ts";
import { TestCaller } from "../caller/caller.ts";
import { readWav, rms, to48k } from "../caller/wav.ts";

async function waitStatus(
  api: { db: { sql: import("../db/client.ts").Pool } },
  id: string,
  want: string,
  ms = 8000,
) {
  const until = Date.now() + ms;
  let status = "";
  while (Date.now() < until) {
    [{ status }] = await api.db.sql`select status from sessions where id = ${id}`;
    if (status === want) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`session ${id} is ${status}, not ${want}`);
}

Deno.test("echo call: the caller's speech comes back and the call is recorded", async () => {
  const api = await startTestApi({}, { node: false });
  const worker = await startWorkerProcess(api.db.url);
  const caller_ = { current: undefined as TestCaller | undefined };
  try {
    const acme = await makeTenant(api, "acme", { brain_url: "echo:" });
    const r = await api.post("/api/v1/sessions.connect", { agent_id: acme.agent_id }, acme.sk);
    assertEquals(r.status, 200);
    const params = r.body.webrtc_request_params;
    assert(params.endpoint.startsWith(worker.url));

    const caller = await TestCaller.connect({ offerUrl: params.endpoint, headers: params.headers });
    caller_.current = caller;
    await waitStatus(api, r.body.session_id, "connecting");
    const botReady = await caller.ready();
    assertEquals((botReady.data as { version: string }).version, "2.1.0");
    await waitStatus(api, r.body.session_id, "active");

    // Silence flows from DTLS up, before anyone speaks.
    await new Promise((res) => setTimeout(res, 400));
    assert(caller.arrivals.length >= 10, `only ${caller.arrivals.length} packets before speech`);
    const quiet = rms(caller.receivedPcm());
    assert(quiet < 50, `silence is not silent: rms ${quiet}`);

    const wav = await speechWav("testing one two three, can you hear me");
    const spoken = rms(to48k(await readWav(wav)));
    await caller.streamWav(wav);
    await new Promise((res) => setTimeout(res, 1200)); // the echo's delay, then playout
    const back = rms(caller.receivedPcm());
    assert(back > quiet * 10 && back > spoken * 0.2, `echo rms ${back} vs spoken ${spoken}`);

    // The node's /stats: aggregate pacing of the call in progress, and nothing per session.
    const statsRes = await fetch(`${worker.url}/stats`);
    const statsText = await statsRes.text();
    assertEquals(statsRes.status, 200);
    const stats = JSON.parse(statsText);
    assertEquals(stats.calls, 1);
    assert(stats.pacing.ticks > 50 && stats.pacing.voiced_frames > 0, statsText);
    assert(stats.pacing.late_ms.p50 <= stats.pacing.late_ms.p99, statsText);
    assert(stats.pacing.late_ms.p99 <= stats.pacing.late_ms.max, statsText);
    assert(!statsText.includes(r.body.session_id), "no session ids in /stats");
    assert(!statsText.includes(params.headers.Authorization.slice(7)), "no tokens in /stats");

    await caller.hangUp();
    await waitStatus(api, r.body.session_id, "ended");
    const record = await api.admin("/api/v1/sessions.get", { session_id: r.body.session_id });
    assertEquals(record.body.end_reason, "hangup");
    assert(record.body.timings.connected_at && record.body.timings.started_at);
    assert(record.body.usage.call_seconds > 1);
    const kinds = record.body.log.map((e: { kind: string }) => e.kind);
    for (const k of ["offer_accepted", "dtls_connected", "call_started", "call_ended"]) {
      assert(kinds.includes(k), `log lacks ${k}: ${kinds}`);
    }
    const [node] = await api.db
      .sql`select active_calls from worker_nodes where id = ${worker.nodeId}`;
    assertEquals(node.active_calls, 0, "the slot is given back");
  } finally {
    await caller_.current?.hangUp();
    await worker.stop();
    await api.close();
  }
});
