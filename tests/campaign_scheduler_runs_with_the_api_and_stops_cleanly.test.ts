// The API process runs the campaign scheduler's loop when it has a dialer, and stops it on close:
// no tick, timer or claim outlives the service (Deno's sanitizers fail a leaked timer).
import { assert, assertEquals } from "./helpers/assert.ts";
import { freshDatabase, realPostgresUrl } from "./helpers/database.ts";
import { TestDialer } from "./helpers/test_dialer.ts";
import { startApiService } from "../api/service.ts";
import { loadSettings } from "../common/settings.ts";
import { loadTelephonySettings } from "../common/telephony_settings.ts";
import { setQuiet } from "../common/log.ts";
import { createAgent } from "../db/agents.ts";
import { createCampaign, getCampaign } from "../db/campaigns.ts";
import { localTime } from "../common/calling_window.ts";

// Real PostgreSQL only (DATABASE_URL, as CI runs): when it was written, the embedded database's
// socket server (pglite-socket) interleaved this test's polling with the loop's statements and
// lost an unnamed portal ("portal \"\" does not exist"). db/pglite_server.ts has since replaced it;
// this test has not been tried on the embedded database again.
Deno.test({
  name: "the API's campaign loop dials a campaign to its end and stops with the service",
  ignore: !realPostgresUrl,
}, async () => {
  setQuiet(true);
  const db = await freshDatabase();
  try {
    const agent = await createAgent(db.sql, { tenant: "acme", name: "a", brain_url: "echo:" });
    // A zone whose wall clock is well inside 00:00-23:59 now (real time drives this loop).
    const zone = ["UTC", "Asia/Tokyo"].find((z) => localTime(new Date(), z) < "23:00")!;
    const campaign = await createCampaign(
      db.sql,
      agent.workspace_id,
      {
        name: "loop",
        agent_id: agent.agent_id,
        from: "+912240000000",
        trunk_id: null,
        starts_at: null,
        concurrency: 3,
        window_start: "00:00",
        window_end: "23:59",
        time_zone: zone,
        max_attempts: 1,
        retry_backoff_seconds: 0,
        retry_on: [],
        ring_timeout_seconds: 30,
        machine_detection: "off",
      },
      Array.from({ length: 6 }, (_, i) => ({
        number: `+91981000000${i}`,
        data: {},
        language: null,
        time_zone: zone,
      })),
      new Date(),
    );
    const dialer = new TestDialer(db.sql, () => ({ status: "ended", reason: "caller_hung_up" }));
    const service = await startApiService(db, loadSettings({ ADMIN_TOKEN: "adm_x_0123456789" }), {
      telephony: loadTelephonySettings({}),
      campaignDial: async (request) => {
        const placed = await dialer.dial(request);
        await dialer.finishAll(); // each call ends at once
        return placed;
      },
      campaignTickMs: 10,
    });
    let status = "";
    for (let i = 0; i < 1000 && status !== "done"; i++) {
      await new Promise((r) => setTimeout(r, 10));
      status = (await getCampaign(db.sql, campaign.campaign_id))!.status;
    }
    await service.close();
    assertEquals(status, "done");
    assertEquals(dialer.calls.length, 6);
    assertEquals(dialer.dialledTwice(), []);
    // Stopped cleanly: it forgot its heartbeat, and left no claim in flight.
    const [left] = await db.sql<{ schedulers: number; open: number }[]>`
      select (select count(*)::int from campaign_schedulers) as schedulers,
        (select count(*)::int from campaign_attempts where outcome is null) as open`;
    assertEquals(left, { schedulers: 0, open: 0 });
    assert(dialer.maxOpen <= 3);
  } finally {
    await db.close();
  }
});
