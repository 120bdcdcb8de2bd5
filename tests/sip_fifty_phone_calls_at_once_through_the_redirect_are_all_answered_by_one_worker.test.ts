// Fifty phone calls at once against one real worker (issue 27): one SIPp process dials a number
// at the control plane's redirect server fifty times, follows each 302 to the worker with the
// session token (RFC 3261 section 8.1.3.4: same Call-ID and tags, CSeq + 1), holds every call up
// together and hangs each up with a BYE. Every call must be answered and ended `caller_hung_up`,
// and the worker's /stats must have carried all fifty at once. Each call's greeting is synthesised
// and sent as RTP (to a port nobody reads: the load is the worker's, not the peer's).
import { assert, assertEquals } from "./helpers/assert.ts";
import { assertSippPassed, freeUdpPort, runSipp } from "./helpers/sipp.ts";
import { makeTenant, startTestApi } from "./helpers/api_server.ts";
import { startWorkerProcess } from "./helpers/process.ts";
import { followRedirect, inDialog, phoneInvite, XML_HEAD } from "./helpers/sipp_scenario.ts";
import { startSipRedirect } from "../api/sip/start.ts";
import { createBrain } from "../sdk/brain/mod.ts";

const CALLS = 50;
const HOLD_MS = 12_000;
const DIALLED = "+15550100";
const invite = (uri: string, cseq: number, rtpPort: number) =>
  phoneInvite(DIALLED, uri, cseq, [0], { port: rtpPort, address: "127.0.0.1" });
const inCall = (method: string, cseq: number) => inDialog(method, cseq, DIALLED);

const scenario = (rtpPort: number, holdMs: number) =>
  `${XML_HEAD}<scenario name="fifty-at-once">
  ${followRedirect(DIALLED, (uri, cseq) => invite(uri, cseq, rtpPort))}
  <recv response="180" optional="true"/>
  <recv response="200" rrs="true">
    <action><ereg regexp="tag=([^;> ]+)" search_in="hdr" header="To:" assign_to="to,wtag"/></action>
  </recv>
  <Reference variables="to"/>
  ${inCall("ACK", 2)}
  <pause milliseconds="${holdMs}"/>
  ${inCall("BYE", 3)}
  <recv response="200"/>
</scenario>`;

Deno.test({
  name:
    "fifty phone calls at once through the redirect are all answered by one worker and end caller_hung_up",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const brain = createBrain({
      onSessionStart: () => "Hello, this is the hotel desk.",
      async *onTurn() {}, // the callers say nothing
    });
    const served = brain.serve({ hostname: "127.0.0.1", port: 0, path: "/brain" });
    // 25 INVITEs a second from one trunk and source, by design: on a loaded host the worker may
    // take a second to start each, so the caps on calls not yet started are off here.
    const api = await startTestApi(
      { PENDING_SESSIONS_PER_TRUNK: "0", PENDING_SESSIONS_PER_SOURCE: "0" },
      { node: false },
    );
    const sipPort = await freeUdpPort();
    const worker = await startWorkerProcess(api.db.url, undefined, {
      SIP_PORT: String(sipPort),
      WORKER_CAPACITY: String(CALLS),
      LOG_LEVEL: "warn",
    });
    const redirect = await startSipRedirect(api.deps, { host: "127.0.0.1", port: 0 });
    let peak = 0, watching = true;
    const watch = (async () => {
      while (watching) {
        const stats = await fetch(`${worker.url}/stats`).then((r) => r.json()).catch(() => null);
        if (stats) peak = Math.max(peak, stats.calls);
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    try {
      const tenant = await makeTenant(api, "acme", { brain_url: served.url });
      // A trunk on loopback: its calls are not rate limited per address as a trunk-less number's.
      const trunk = await api.admin("/api/v1/trunks.create", {
        name: "loopback carrier",
        allowed_sources: ["127.0.0.0/8"],
      });
      assertEquals(trunk.status, 200, JSON.stringify(trunk.body));
      const number = await api.admin("/api/v1/numbers.create", {
        number: DIALLED,
        agent_id: tenant.agent_id,
        trunk_id: trunk.body.trunk.trunk_id,
      });
      assertEquals(number.status, 200, JSON.stringify(number.body));

      const deadRtp = await freeUdpPort(); // nothing listens: the worker's RTP goes nowhere
      // 25 calls a second, each held 12 s after its answer: all fifty are up together as long as
      // the worker answers the last within 10 s of the first. 8 s failed once in CI beside a
      // whole call in the other lane (the cause was not printed; a slow answer is the likely one,
      // so the spread of the answers is now part of the failure message).
      const run = await runSipp(scenario(deadRtp, HOLD_MS), redirect.port, DIALLED, "udp", [
        ...["-m", String(CALLS), "-l", String(CALLS), "-r", "25"],
        ...["-timeout", "180"],
      ]);
      assertSippPassed(run);

      const rows = await api.db.sql<{ status: string; end_reason: string | null }[]>`
        select status, end_reason from sessions where agent_id = ${tenant.agent_id}`;
      assertEquals(rows.length, CALLS);
      const until = Date.now() + 30_000;
      let ended = rows;
      while (Date.now() < until) {
        ended = await api.db.sql<{ status: string; end_reason: string | null }[]>`
          select status, end_reason from sessions where agent_id = ${tenant.agent_id}`;
        if (ended.every((r) => r.status === "ended")) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      const reasons = ended.map((r) => `${r.status}/${r.end_reason}`);
      const [spread] = await api.db.sql<{ first: Date | null; last: Date | null }[]>`
        select min(started_at) as first, max(started_at) as last from sessions
        where agent_id = ${tenant.agent_id}`;
      const answeredOver = spread.first && spread.last
        ? spread.last.getTime() - spread.first.getTime()
        : NaN;
      assertEquals(
        reasons.filter((r) => r === "ended/caller_hung_up").length,
        CALLS,
        reasons.join(),
      );
      assert(
        peak === CALLS,
        `the worker carried at most ${peak} calls at once; its answers spread over ` +
          `${answeredOver} ms, each call held ${HOLD_MS} ms`,
      );
    } finally {
      watching = false;
      await watch;
      await redirect.close();
      await worker.stop();
      await served.shutdown();
      await api.close();
    }
  },
});
