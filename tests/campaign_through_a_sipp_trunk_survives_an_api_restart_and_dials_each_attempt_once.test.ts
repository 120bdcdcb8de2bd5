// A campaign (issue 34) the whole way: the API's own scheduler dials through dialNumber → a real
// worker process with SIP → SIPp 3.6 as the trunk, whose callees answer by the number's last
// digit (1 busy, 2 never answers: CANCEL at the 5 s ring timeout, the rest answer and hang up
// after a second). Mid-campaign the API is stopped and a new one started on the same database
// (the worker keeps running). Each contact attempt is dialled once (SIPp's INVITEs per number
// against the attempt rows and the sessions), busy and no-answer are retried once, no more than
// the campaign's concurrency is ever in progress, and the campaign ends done.
import { assert, assertEquals } from "./helpers/assert.ts";
import { makeTenant, startTestApi, type TestApi } from "./helpers/api_server.ts";
import { freshDatabase, realPostgresUrl } from "./helpers/database.ts";
import { startWorkerProcess, type WorkerProcess } from "./helpers/process.ts";
import { countInvites, freeUdpPort, type SippTrunkServer, startSippTrunk } from "./helpers/sipp.ts";
import { answersByLastDigit } from "./helpers/sipp_trunk.ts";
import { PhoneCaller } from "./helpers/phone_caller.ts";
import { eventually } from "./helpers/live_call.ts";
import { localTime } from "../common/calling_window.ts";
import { createBrain } from "../sdk/brain/mod.ts";

const OUR_NUMBER = "+912240000000";
const CONTACTS = 100;
const CONCURRENCY = 10;
const number = (i: number) => `+9198100${String(i).padStart(5, "0")}`;
/** What the trunk does with contact i (its number's last digit). */
const outcomeOf = (i: number) => i % 10 === 1 ? "busy" : i % 10 === 2 ? "no_answer" : "answered";

// Real PostgreSQL only (DATABASE_URL, as CI runs): two API processes' schedulers and this test's
// sampling share the database, which the embedded PGlite's socket server cannot interleave
// (docs/decisions.md, "Outbound campaigns").
Deno.test({
  name: "a campaign through a SIPp trunk survives an API restart and dials each attempt once",
  ignore: !realPostgresUrl,
}, async () => {
  const brain = createBrain({
    onSessionStart: () => "Hello, this is a reminder call.",
    onTurn: () => "Thank you.",
  });
  const served = brain.serve({ hostname: "127.0.0.1", port: 0, path: "/brain" });
  const db = await freshDatabase();
  const callee = await PhoneCaller.open(); // every answered call's media goes here
  let api: TestApi | undefined;
  let worker: WorkerProcess | undefined;
  let sipp: SippTrunkServer | undefined;
  let sampling = true;
  let sampler: Promise<number> | undefined;
  try {
    api = await startTestApi({}, { db, node: false });
    worker = await startWorkerProcess(db.url, undefined, {
      SIP_PORT: String(await freeUdpPort()),
      RECORDINGS_DIR: await Deno.makeTempDir({ prefix: "recordings-" }),
    });
    const tenant = await makeTenant(api, "acme", { brain_url: served.url });
    const trunkPort = await freeUdpPort();
    sipp = await startSippTrunk(answersByLastDigit(callee.port, 1000), trunkPort);
    const trunk = await api.admin("/api/v1/trunks.create", {
      name: "sipp",
      allowed_sources: ["127.0.0.1"],
      outbound_address: `127.0.0.1:${trunkPort}`,
    });
    assertEquals(trunk.status, 200, JSON.stringify(trunk.body));
    const made = await api.admin("/api/v1/numbers.create", {
      number: OUR_NUMBER,
      agent_id: tenant.agent_id,
      trunk_id: trunk.body.trunk.trunk_id,
    });
    assertEquals(made.status, 200, JSON.stringify(made.body));
    // The window covers now: India's zone unless its clock is about to pass 23:59 (then UTC's).
    const zone = ["Asia/Kolkata", "UTC", "Asia/Tokyo"].find((z) =>
      localTime(new Date(), z) < "23:50"
    )!;
    const created = await api.admin("/api/v1/campaigns.create", {
      agent_id: tenant.agent_id,
      name: "reminders",
      from: OUR_NUMBER,
      concurrency: CONCURRENCY,
      window_start: "00:00",
      window_end: "23:59",
      time_zone: zone,
      max_attempts: 2,
      retry_backoff_seconds: 1,
      retry_on: ["busy", "no_answer"],
      ring_timeout_seconds: 5,
      contacts: Array.from({ length: CONTACTS }, (_, i) => ({ number: number(i), data: { i } })),
    });
    assertEquals(created.status, 200, JSON.stringify(created.body));
    const campaignId = created.body.campaign.campaign_id as string;

    // Calls in progress, sampled through the run: sessions not ended, attempts not settled.
    sampler = (async () => {
      let most = 0;
      while (sampling) {
        const [r] = await db.sql<{ sessions: number; attempts: number }[]>`select
          (select count(*)::int from sessions where direction = 'outbound'
            and status in ('created', 'connecting', 'active')) as sessions,
          (select count(*)::int from campaign_attempts where outcome is null) as attempts`;
        most = Math.max(most, r.sessions, r.attempts);
        await new Promise((res) => setTimeout(res, 100));
      }
      return most;
    })();

    // The first API's scheduler dials thirty attempts (of about 120); then it is replaced.
    await eventually("thirty attempts dialled", async () => {
      const [{ n }] = await db.sql<{ n: number }[]>`select count(*)::int as n
        from campaign_attempts where session_id is not null`;
      return n >= 30 || undefined;
    }, 60_000);
    await api.close();
    const [before] = await db.sql<{ pending: number }[]>`select count(*)::int as pending
      from campaign_contacts where campaign_id = ${campaignId} and state = 'pending'`;
    assert(before.pending > 0, "the campaign was over before the restart");
    api = await startTestApi({}, { db, node: false });

    const done = await eventually("the campaign done", async () => {
      const r = await api!.admin("/api/v1/campaigns.get", { campaign_id: campaignId });
      return r.body.campaign.status === "done" ? r.body.campaign : undefined;
    }, 120_000).catch(async (err) => {
      const r = await api!.admin("/api/v1/campaigns.get", { campaign_id: campaignId });
      throw new Error(`${err.message}: ${JSON.stringify(r.body)}\n${worker!.child.output()}`);
    });
    sampling = false;
    const most = await sampler;
    assert(most <= CONCURRENCY, `${most} calls were in progress at once`);
    assertEquals(done.progress.contacts.done, CONTACTS, JSON.stringify(done.progress));

    const run = await sipp.stop();
    sipp = undefined;
    const invites = countInvites(run.messages);

    const attempts = await db.sql<
      {
        contact_index: number;
        attempt: number;
        outcome: string;
        session_id: string | null;
        claimed_by: string;
      }[]
    >`select contact_index, attempt, outcome, session_id, claimed_by from campaign_attempts
      where campaign_id = ${campaignId} order by contact_index, attempt`;
    const sessions = await db.sql<{ to: string; attempt: string; n: number }[]>`
      select metadata->>'phone_to' as to, metadata->>'attempt' as attempt, count(*)::int as n
      from sessions where metadata->>'campaign_id' = ${campaignId}
      group by 1, 2`;
    const sessionsOf = new Map(sessions.map((s) => [`${s.to}#${s.attempt}`, s.n]));
    for (let i = 0; i < CONTACTS; i++) {
      const mine = attempts.filter((a) => a.contact_index === i);
      const expected = outcomeOf(i);
      const tries = expected === "answered" ? 1 : 2;
      // One row per attempt number, 1..tries, each with the outcome the trunk gave.
      assertEquals(
        mine.map((a) => [a.attempt, a.outcome]),
        Array.from({ length: tries }, (_, k) => [k + 1, expected]),
        `contact ${i} (${number(i)})`,
      );
      for (const a of mine) {
        assert(a.session_id, `contact ${i} attempt ${a.attempt} has no session`);
        assertEquals(sessionsOf.get(`${number(i)}#${a.attempt}`), 1, `contact ${i}`);
      }
      // Every attempt reached the trunk once: one INVITE (one Call-ID) per attempt.
      assertEquals(invites.get(number(i)) ?? 0, tries, `INVITEs to ${number(i)}`);
    }
    assertEquals([...invites.keys()].length, CONTACTS, [...invites.keys()].join(" "));
    // Both APIs' schedulers dialled: the second took the campaign up where the first stopped.
    assertEquals(new Set(attempts.map((a) => a.claimed_by)).size, 2);
  } finally {
    sampling = false;
    await sampler?.catch(() => 0);
    await sipp?.stop();
    await worker?.stop();
    await api?.close();
    await callee.close();
    await db.close();
    await served.shutdown();
  }
});
