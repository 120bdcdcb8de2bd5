// campaign.attempt_done: the campaign scheduler settling an attempt queues its webhook in the same
// statement, with the outcome and whether the contact will be tried again, ordered after the
// attempt's own session.ended to each endpoint (the session's events are delivered in order).
import { assertEquals } from "./helpers/assert.ts";
import { freshDatabase } from "./helpers/database.ts";
import { TestDialer } from "./helpers/test_dialer.ts";
import { CampaignScheduler } from "../api/campaigns/scheduler.ts";
import { createCampaign, getCampaign } from "../db/campaigns.ts";
import { createAgent } from "../db/agents.ts";
import { createEndpoint } from "../db/webhooks.ts";
import { setQuiet } from "../common/log.ts";

setQuiet(true);

Deno.test("each campaign attempt's outcome is reported after its call's end", async () => {
  const db = await freshDatabase();
  try {
    let at = new Date("2026-01-15T06:00:00Z").getTime(); // 11:30 in Kolkata
    const now = () => new Date(at);
    const agent = await createAgent(db.sql, { tenant: "acme", name: "A", brain_url: "wss://b" });
    await createEndpoint(db.sql, {
      endpoint_id: "whk_crm",
      workspace_id: agent.workspace_id,
      agent_id: null,
      url: "https://crm.example.com/",
      description: "",
      event_types: ["session.ended", "campaign.attempt_done"],
      secret_sealed: "sealed",
    });
    const campaign = await createCampaign(db.sql, agent.workspace_id, {
      name: "dues",
      agent_id: agent.agent_id,
      from: "+912240000000",
      trunk_id: null,
      starts_at: null,
      concurrency: 2,
      window_start: "09:00",
      window_end: "21:00",
      time_zone: "Asia/Kolkata",
      max_attempts: 2,
      retry_backoff_seconds: 60,
      retry_on: ["busy"],
      ring_timeout_seconds: 30,
      machine_detection: "off",
    }, [
      { number: "+919810000000", data: {}, language: null, time_zone: "Asia/Kolkata" },
      { number: "+919810000001", data: {}, language: null, time_zone: "Asia/Kolkata" },
    ], now());
    const dialer = new TestDialer(
      db.sql,
      (i, attempt) =>
        i === 0 && attempt === 1
          ? { status: "ended", reason: "busy" }
          : { status: "ended", reason: "brain_ended" },
    );
    const scheduler = new CampaignScheduler(db.sql, dialer.dial, { now });
    for (let i = 0; i < 10; i++) {
      await scheduler.tick();
      if ((await getCampaign(db.sql, campaign.campaign_id))!.status === "done") break;
      await dialer.finishAll();
      at += 61_000;
    }
    const rows = await db.sql<{ type: string; session_id: string; body: string }[]>`
      select ev.type, d.session_id, ev.body from webhook_deliveries d
        join webhook_events ev on ev.id = d.event_id order by d.id`;
    const done = rows.filter((r) => r.type === "campaign.attempt_done")
      .map((r) => JSON.parse(r.body).data);
    assertEquals(
      done.map((d) => [d.contact_index, d.attempt, d.outcome, d.will_retry]).sort(),
      [[0, 1, "busy", true], [0, 2, "answered", false], [1, 1, "answered", false]],
    );
    for (const d of done) {
      const mine = rows.filter((r) => r.session_id === d.session_id).map((r) => r.type);
      assertEquals(mine, ["session.ended", "campaign.attempt_done"], d.session_id);
      assertEquals(d.campaign_id, campaign.campaign_id);
    }
  } finally {
    await db.close();
  }
});
