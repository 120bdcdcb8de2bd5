// The API process is only the way into a call: once the worker has the call, the API process can
// stop and a new one start without the call noticing. Audio comes back, page messages are
// answered, the session stays active, connect works again on the new process, and the call's end
// is recorded by the worker as usual.
import { assert, assertEquals } from "./helpers/assert.ts";
import { makeTenant, readReply, type TestApi } from "./helpers/api_server.ts";
import { freshDatabase } from "./helpers/database.ts";
import {
  type Child,
  freePort,
  spawnDeno,
  startWorkerProcess,
  waitHealthy,
} from "./helpers/process.ts";
import {
  echoLoudness,
  eventually,
  pageMessageAnswered,
  sessionLog,
  sessionRow,
  startEchoCall,
} from "./helpers/live_call.ts";
import type { TestCaller } from "../caller/caller.ts";

const ADMIN_TOKEN = "adm_api_restart_test_0123456789";

/** `api/main.ts` in its own process on a free port. */
async function startApiProcess(databaseUrl: string): Promise<{ url: string; child: Child }> {
  const port = freePort();
  const child = spawnDeno("api/main.ts", {
    DATABASE_URL: databaseUrl,
    API_PORT: String(port),
    ADMIN_TOKEN,
  });
  const url = `http://127.0.0.1:${port}`;
  await waitHealthy(`${url}/readyz`, child);
  return { url, child };
}

/** Enough of TestApi for makeTenant: admin calls over HTTP. */
function adminOf(url: string): TestApi {
  const admin = async (path: string, body: unknown = {}) =>
    readReply(
      await fetch(url + path, {
        method: "POST",
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      }),
    );
  return { url, admin } as unknown as TestApi;
}

Deno.test("an API process stopped and replaced mid-call leaves the call running and recorded", async () => {
  const db = await freshDatabase();
  let api = await startApiProcess(db.url);
  const worker = await startWorkerProcess(db.url);
  let caller: TestCaller | undefined;
  try {
    const acme = await makeTenant(adminOf(api.url), "acme", { brain_url: "echo:" });
    const call = await startEchoCall(api.url, acme);
    caller = call.caller;
    const { sessionId } = call;
    await eventually("active", async () => {
      const row = await sessionRow(db.sql, sessionId);
      return row.status === "active" ? row : undefined;
    }, 5000);
    await pageMessageAnswered(caller, "before");

    // SIGTERM: the API finishes what it was doing and exits; the call does not depend on it.
    const status = await api.child.stop("SIGTERM");
    assertEquals(status.code, 0, api.child.output());
    const down = performance.now();
    const loud = await echoLoudness(caller);
    assert(loud > 500, `the echo comes back with no API process: rms ${loud}`);
    await pageMessageAnswered(caller, "no-api");
    await new Promise((r) => setTimeout(r, Math.max(0, 3500 - (performance.now() - down))));
    assertEquals((await sessionRow(db.sql, sessionId)).status, "active");

    // A new API process on the same database takes connects again; the call goes on meanwhile.
    api = await startApiProcess(db.url);
    const again = await fetch(`${api.url}/api/v1/sessions.connect`, {
      method: "POST",
      headers: { authorization: `Bearer ${acme.sk}`, "content-type": "application/json" },
      body: JSON.stringify({ agent_id: acme.agent_id }),
    });
    const body = await again.json();
    assertEquals(again.status, 200, JSON.stringify(body));
    assert(body.webrtc_request_params.endpoint.startsWith(worker.url));
    await pageMessageAnswered(caller, "new-api");
    assert(await echoLoudness(caller) > 500, "the echo still comes back");

    await caller.hangUp();
    const ended = await eventually("the end", async () => {
      const row = await sessionRow(db.sql, sessionId);
      return row.status === "active" ? undefined : row;
    }, 8000);
    assertEquals([ended.status, ended.end_reason], ["ended", "hangup"]);
    assert(Number(ended.call_seconds) > 4, `booked ${ended.call_seconds} s`);
    const log = await sessionLog(db.sql, sessionId);
    const said = log.filter((e) => e.kind === "client-message").map((e) => e.data.t);
    assertEquals(said, ["before", "no-api", "new-api"]);
    assertEquals(log.at(-1)?.kind, "call_ended");
  } finally {
    await caller?.hangUp();
    await worker.stop();
    await api.child.stop();
    await db.close();
  }
});
