// The campaign scheduler on a real database (api/campaigns/scheduler.ts, db/campaign_dialing.ts):
// concurrency caps, retries, restarts between claim and dial, two schedulers on one database,
// calling windows in each contact's zone, pause/resume/cancel. Time is the injected clock only.
import { assert, assertEquals } from "./helpers/assert.ts";
import { freshDatabase, realPostgresUrl } from "./helpers/database.ts";
import { type PlannedOutcome, TestDialer } from "./helpers/test_dialer.ts";
import { CampaignScheduler } from "../api/campaigns/scheduler.ts";
import { claimDue, settleAttempts } from "../db/campaign_dialing.ts";
import {
  type CampaignSettings,
  changeCampaignStatus,
  createCampaign,
  getCampaign,
  listAttempts,
  listContacts,
} from "../db/campaigns.ts";
import { createAgent } from "../db/agents.ts";
import type { Database } from "../db/client.ts";
import { setQuiet } from "../common/log.ts";

setQuiet(true);

/** A movable clock: 11:30 in Kolkata (06:00 UTC) on a Thursday. */
function clock(iso = "2026-01-15T06:00:00Z") {
  let at = new Date(iso).getTime();
  return {
    now: () => new Date(at),
    advance: (seconds: number) => void (at += seconds * 1000),
  };
}

async function campaignOf(
  db: Database,
  now: Date,
  contacts: number | { time_zone?: string }[],
  settings: Partial<CampaignSettings> = {},
) {
  const agent = await createAgent(db.sql, {
    tenant: "acme",
    name: "Collections",
    brain_url: "wss://brain.example.test/voice",
  });
  const list: { time_zone?: string }[] = typeof contacts === "number"
    ? Array.from({ length: contacts }, () => ({}))
    : contacts;
  return await createCampaign(
    db.sql,
    agent.workspace_id,
    {
      name: "January dues",
      agent_id: agent.agent_id,
      from: "+912240000000",
      trunk_id: null,
      starts_at: null,
      concurrency: 10,
      window_start: "09:00",
      window_end: "21:00",
      time_zone: "Asia/Kolkata",
      max_attempts: 3,
      retry_backoff_seconds: 60,
      retry_on: ["no_answer", "busy"],
      ring_timeout_seconds: 30,
      machine_detection: "off",
      ...settings,
    },
    list.map((c, i) => ({
      number: `+9198${String(10_000_000 + i)}`,
      data: { customer: `c${i}` },
      language: null,
      time_zone: c.time_zone ?? "Asia/Kolkata",
    })),
    now,
  );
}

async function openAttempts(db: Database, campaignId: string): Promise<number> {
  const [{ n }] = await db.sql<{ n: number }[]>`select count(*)::int as n from campaign_attempts
    where campaign_id = ${campaignId} and outcome is null`;
  return n;
}

/** Ticks (ending every call placed after each tick) until the campaign is done. */
async function runToDone(
  db: Database,
  campaignId: string,
  schedulers: CampaignScheduler[],
  dialers: TestDialer[],
  time: ReturnType<typeof clock>,
  cap: number,
) {
  for (let i = 0; i < 200; i++) {
    await Promise.all(schedulers.map((s) => s.tick()));
    assert(await openAttempts(db, campaignId) <= cap, "more attempts in progress than the cap");
    if ((await getCampaign(db.sql, campaignId))!.status === "done") return;
    for (const d of dialers) await d.finishAll();
    time.advance(61);
  }
  throw new Error("the campaign never finished");
}

// By contact index: what each attempt's call does.
function mixedPlan(i: number, attempt: number): PlannedOutcome {
  switch (i % 10) {
    case 0:
    case 5:
      return { status: "ended", reason: "brain_ended" };
    case 1:
    case 6:
      return { status: "ended", reason: "busy" };
    case 2:
    case 7:
      return attempt === 1
        ? { status: "ended", reason: "no_answer" }
        : { status: "ended", reason: "caller_hung_up" };
    case 3:
      return { status: "ended", reason: "rejected" };
    case 8:
      return { status: "ended", reason: "machine" };
    case 4:
      return { status: "failed", reason: "dial_failed" };
    default:
      return { refuse: "from_not_owned" };
  }
}

/** What each contact must end as under mixedPlan with max_attempts 3. */
function expected(i: number): { state: string; attempts: number; outcome: string | null } {
  switch (i % 10) {
    case 0:
    case 5:
      return { state: "done", attempts: 1, outcome: "answered" };
    case 1:
    case 6:
      return { state: "done", attempts: 3, outcome: "busy" };
    case 2:
    case 7:
      return { state: "done", attempts: 2, outcome: "answered" };
    case 3:
      return { state: "done", attempts: 1, outcome: "rejected" };
    case 8:
      return { state: "done", attempts: 1, outcome: "machine" };
    case 4:
      return { state: "failed", attempts: 1, outcome: "dial_failed" };
    default:
      return { state: "failed", attempts: 1, outcome: "refused" };
  }
}

async function assertEveryContactAccountedFor(db: Database, campaignId: string, n: number) {
  const contacts = await listContacts(db.sql, campaignId, { limit: 10_000 });
  assertEquals(contacts.length, n);
  for (const c of contacts) {
    assertEquals(
      { state: c.state, attempts: c.attempts, outcome: c.last_outcome },
      expected(c.contact_index),
      `contact ${c.contact_index}`,
    );
  }
  const attempts = await listAttempts(db.sql, campaignId, { limit: 10_000 });
  assertEquals(attempts.length, contacts.reduce((sum, c) => sum + c.attempts, 0));
  assert(attempts.every((a) => a.outcome !== null), "an attempt was left in progress");
}

Deno.test("100 contacts at concurrency 10: never more than 10 in progress, retries as configured", async () => {
  const db = await freshDatabase();
  try {
    const time = clock();
    const campaign = await campaignOf(db, time.now(), 100);
    const dialer = new TestDialer(db.sql, mixedPlan);
    const scheduler = new CampaignScheduler(db.sql, dialer.dial, { now: time.now });
    await runToDone(db, campaign.campaign_id, [scheduler], [dialer], time, 10);
    assert(dialer.maxOpen <= 10, `${dialer.maxOpen} calls were open at once`);
    assertEquals(dialer.maxOpen, 10);
    assertEquals(dialer.dialledTwice(), []);
    await assertEveryContactAccountedFor(db, campaign.campaign_id, 100);
    // The retried attempts waited out the backoff: attempt n+1 starts >= 60 s after attempt n.
    const attempts = await listAttempts(db.sql, campaign.campaign_id, { limit: 10_000 });
    for (const a of attempts.filter((a) => a.attempt > 1)) {
      const before = attempts.find((b) =>
        b.contact_index === a.contact_index && b.attempt === a.attempt - 1
      )!;
      assert(a.started_at.getTime() - before.ended_at!.getTime() >= 60_000, "retried too soon");
    }
    // The session carries what the brain is given and which attempt it is.
    const [call] = dialer.calls.filter((c) => c.contact_index === 2 && c.attempt === 2);
    assertEquals(call.request.agent_input, { customer: "c2" });
    assertEquals(call.request.to, "+919810000002");
  } finally {
    await db.close();
  }
});

Deno.test("a scheduler stopped mid-dial or between claim and dial: those attempts are never dialled again", async () => {
  const db = await freshDatabase();
  try {
    const time = clock();
    const campaign = await campaignOf(db, time.now(), 30);
    const id = campaign.campaign_id;
    // The first scheduler claims 10 and dials them one by one; its 7th dial never returns (it
    // stops there): 6 placed, 1 lost mid-dial, 3 claimed and never dialled.
    const first = new TestDialer(db.sql, mixedPlan);
    let asked = 0;
    const stuck = new CampaignScheduler(db.sql, async (r) => {
      return ++asked <= 6 ? await first.dial(r) : await new Promise<never>(() => {});
    }, { now: time.now });
    void stuck.tick();
    for (let i = 0; asked < 7 || await followed(db, id) < 6; i++) {
      assert(i < 2000, "the first scheduler never placed its dials");
      await new Promise((r) => setTimeout(r, 5));
    }
    await first.finishAll();
    // Settled by someone else's pass: the stuck scheduler is still fresh, its 4 stay claimed.
    assertEquals(await settleAttempts(db.sql, "sch_other", time.now(), 30), 6);
    // Another dies right after its claim committed, before dialling: 6 slots were free.
    const claimed = await claimDue(db.sql, id, "sch_died", time.now());
    assertEquals(claimed.length, 6);
    const lost = new Set([
      ...claimed.map((c) => c.contact_index),
      ...(await listAttempts(db.sql, id, { limit: 100 }))
        .filter((a) =>
          a.session_id === null && !claimed.some((c) => c.contact_index === a.contact_index)
        )
        .map((a) => a.contact_index),
    ]);
    assertEquals(lost.size, 10);
    // A restarted API's scheduler, after the dead ones' heartbeats went stale.
    time.advance(31);
    const after = new TestDialer(db.sql, mixedPlan);
    const restarted = new CampaignScheduler(db.sql, after.dial, { now: time.now });
    assertEquals((await restarted.tick()).settled, 10);
    await runToDone(db, id, [restarted], [after], time, 10);
    assertEquals(after.dialledTwice([first]), []);
    for (const c of await listContacts(db.sql, id, { limit: 100 })) {
      if (lost.has(c.contact_index)) {
        // Claimed once, counted as an attempt, settled dial_lost, never placed again.
        assertEquals([c.state, c.last_outcome, c.attempts], ["failed", "dial_lost", 1]);
        assert(!after.calls.some((a) => a.contact_index === c.contact_index));
      } else {
        assertEquals(
          { state: c.state, attempts: c.attempts, outcome: c.last_outcome },
          expected(c.contact_index),
        );
      }
    }
  } finally {
    await db.close();
  }
});

async function followed(db: Database, campaignId: string): Promise<number> {
  const [{ n }] = await db.sql<{ n: number }[]>`select count(*)::int as n from campaign_attempts
    where campaign_id = ${campaignId} and session_id is not null`;
  return n;
}

// Two API processes share a real PostgreSQL; the embedded PGlite serves one process's statements
// one stream at a time, so this runs only with DATABASE_URL (as CI does).
Deno.test({
  name: "two schedulers ticking at once never dial one contact attempt twice",
  ignore: !realPostgresUrl,
}, async () => {
  const db = await freshDatabase({ max: 12 });
  try {
    const time = clock();
    const campaign = await campaignOf(db, time.now(), 60, { concurrency: 7 });
    const dialer = new TestDialer(db.sql, mixedPlan);
    const a = new CampaignScheduler(db.sql, dialer.dial, { now: time.now });
    const b = new CampaignScheduler(db.sql, dialer.dial, { now: time.now });
    await runToDone(db, campaign.campaign_id, [a, b], [dialer], time, 7);
    assertEquals(dialer.dialledTwice(), []);
    assert(dialer.maxOpen <= 7, `${dialer.maxOpen} calls were open at once`);
    await assertEveryContactAccountedFor(db, campaign.campaign_id, 60);
  } finally {
    await db.close();
  }
});

Deno.test("at 21:30 in Kolkata nothing is dialled until 09:00; a contact in its own window is", async () => {
  const db = await freshDatabase();
  try {
    const time = clock("2026-01-15T16:00:00Z"); // 21:30 in Kolkata, 11:00 in New York
    const campaign = await campaignOf(db, time.now(), [{}, {}, { time_zone: "America/New_York" }]);
    const dialer = new TestDialer(db.sql, () => ({ status: "ended", reason: "caller_hung_up" }));
    const scheduler = new CampaignScheduler(db.sql, dialer.dial, { now: time.now });
    await scheduler.tick();
    assertEquals(dialer.calls.map((c) => c.contact_index), [2]);
    const contacts = await listContacts(db.sql, campaign.campaign_id, { limit: 10 });
    for (const c of contacts.slice(0, 2)) {
      assertEquals(c.state, "pending");
      assertEquals(c.attempts, 0);
      assertEquals(c.next_attempt_at.toISOString(), "2026-01-16T03:30:00.000Z"); // 09:00 IST
    }
    time.advance(60);
    await scheduler.tick();
    assertEquals(dialer.calls.length, 1);
    time.advance(11.5 * 3600 - 61); // 08:59:59 IST
    await scheduler.tick();
    assertEquals(dialer.calls.length, 1);
    time.advance(1);
    await scheduler.tick();
    assertEquals(dialer.calls.map((c) => c.contact_index).sort(), [0, 1, 2]);
  } finally {
    await db.close();
  }
});

Deno.test("pause stops claiming, resume goes on, cancel ends pending contacts", async () => {
  const db = await freshDatabase();
  try {
    const time = clock();
    const campaign = await campaignOf(db, time.now(), 8, { concurrency: 2 });
    const id = campaign.campaign_id;
    const dialer = new TestDialer(
      db.sql,
      (i) => i === 5 ? { status: "ended", reason: "busy" } : { status: "ended", reason: "x" },
    );
    const scheduler = new CampaignScheduler(db.sql, dialer.dial, { now: time.now });
    await scheduler.tick();
    assertEquals(dialer.calls.length, 2);
    assertEquals(
      (await changeCampaignStatus(db.sql, id, ["running"], "paused", time.now()))!.status,
      "paused",
    );
    await dialer.finishAll();
    await scheduler.tick(); // the calls in progress are settled; nothing new is claimed
    assertEquals(dialer.calls.length, 2);
    assertEquals(await openAttempts(db, id), 0);
    assertEquals((await getCampaign(db.sql, id))!.status, "paused");
    await changeCampaignStatus(db.sql, id, ["paused"], "running", time.now());
    await scheduler.tick();
    await dialer.finishAll();
    await scheduler.tick();
    assertEquals(dialer.calls.map((c) => c.contact_index), [0, 1, 2, 3, 4, 5]);
    // Contact 5 is busy: retried later, and in progress (4) when the campaign is cancelled.
    assertEquals(await openAttempts(db, id), 2);
    assertEquals(
      (await changeCampaignStatus(
        db.sql,
        id,
        ["running", "paused", "scheduled"],
        "cancelled",
        time.now(),
      ))!.status,
      "cancelled",
    );
    await dialer.finishAll();
    time.advance(61);
    await scheduler.tick();
    assertEquals(dialer.calls.length, 6);
    const states = (await listContacts(db.sql, id, { limit: 10 })).map((c) => c.state);
    assertEquals(states, [
      "done",
      "done",
      "done",
      "done",
      "done",
      "cancelled",
      "cancelled",
      "cancelled",
    ]);
    assertEquals((await getCampaign(db.sql, id))!.status, "cancelled");
    assertEquals(
      await changeCampaignStatus(db.sql, id, ["paused"], "running", time.now()),
      undefined,
    );
  } finally {
    await db.close();
  }
});

Deno.test("a dial that throws ends its attempt dial_lost; it is retried only as a new attempt", async () => {
  const db = await freshDatabase();
  try {
    const time = clock();
    const campaign = await campaignOf(db, time.now(), 2, { retry_on: ["dial_lost"] });
    const dialer = new TestDialer(db.sql, () => ({ status: "ended", reason: "caller_hung_up" }));
    let threw = 0;
    const scheduler = new CampaignScheduler(db.sql, async (request) => {
      if (request.metadata.contact_index === "0" && request.metadata.attempt === "1") {
        threw++;
        throw new Error("worker unreachable");
      }
      return await dialer.dial(request);
    }, { now: time.now });
    assertEquals((await scheduler.tick()).lost, 1);
    await dialer.finishAll();
    time.advance(61);
    await scheduler.tick(); // settles dial_lost, and contact 1's call
    time.advance(61);
    await scheduler.tick(); // contact 0's second attempt
    await dialer.finishAll();
    await scheduler.tick();
    assertEquals(threw, 1);
    assertEquals(dialer.calls.map((c) => [c.contact_index, c.attempt]), [[1, 1], [0, 2]]);
    const attempts = await listAttempts(db.sql, campaign.campaign_id, {
      contact_index: 0,
      limit: 9,
    });
    assertEquals(attempts.map((a) => [a.attempt, a.outcome]), [[1, "dial_lost"], [2, "answered"]]);
    assertEquals((await getCampaign(db.sql, campaign.campaign_id))!.status, "done");
  } finally {
    await db.close();
  }
});

Deno.test("a campaign with a start time waits for it, scheduled", async () => {
  const db = await freshDatabase();
  try {
    const time = clock();
    const startsAt = new Date(time.now().getTime() + 3600_000);
    const campaign = await campaignOf(db, time.now(), 1, { starts_at: startsAt });
    const dialer = new TestDialer(db.sql, () => ({ status: "ended", reason: "caller_hung_up" }));
    const scheduler = new CampaignScheduler(db.sql, dialer.dial, { now: time.now });
    await scheduler.tick();
    assertEquals((await getCampaign(db.sql, campaign.campaign_id))!.status, "scheduled");
    assertEquals(dialer.calls.length, 0);
    time.advance(3600);
    await scheduler.tick();
    assertEquals((await getCampaign(db.sql, campaign.campaign_id))!.status, "running");
    assertEquals(dialer.calls.length, 1);
  } finally {
    await db.close();
  }
});
