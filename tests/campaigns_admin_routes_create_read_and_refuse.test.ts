// The campaigns admin routes: create with contacts inline, read with progress, pause/resume/cancel,
// page contacts and attempts; a refused create writes nothing.
import { assert, assertEquals } from "./helpers/assert.ts";
import { makeTenant, startTestApi, type TestApi } from "./helpers/api_server.ts";

async function campaignRows(api: TestApi) {
  const [row] = await api.db.sql<{ campaigns: number; contacts: number }[]>`
    select (select count(*)::int from campaigns) as campaigns,
      (select count(*)::int from campaign_contacts) as contacts`;
  return row;
}

Deno.test("campaigns over the admin API", async (t) => {
  const api = await startTestApi();
  try {
    const acme = await makeTenant(api, "acme");
    const other = await makeTenant(api, "globex");
    await api.admin("/api/v1/numbers.create", { number: "+912240000000", agent_id: acme.agent_id });
    await api.admin("/api/v1/numbers.create", {
      number: "+912240000001",
      agent_id: other.agent_id,
    });
    const good = {
      agent_id: acme.agent_id,
      name: "January dues",
      from: "+912240000000",
      concurrency: 5,
      contacts: [
        { number: "+919810000000", data: { customer: "Asha" }, language: "hi-IN" },
        { number: "+14155550100", time_zone: "America/New_York" },
        { number: "+919810000002" },
      ],
    };

    await t.step(
      "create: defaults are India's window and zone; progress counts contacts",
      async () => {
        const r = await api.admin("/api/v1/campaigns.create", good);
        assertEquals(r.status, 200, JSON.stringify(r.body));
        const c = r.body.campaign;
        assertEquals(
          [c.status, c.window_start, c.window_end, c.time_zone, c.retry_on, c.max_attempts],
          ["scheduled", "09:00", "21:00", "Asia/Kolkata", ["no_answer", "busy"], 3],
        );
        assertEquals(c.progress.contacts, {
          pending: 3,
          dialing: 0,
          done: 0,
          failed: 0,
          cancelled: 0,
          total: 3,
        });
        const contacts = await api.admin("/api/v1/campaigns.contacts", {
          campaign_id: c.campaign_id,
          limit: 2,
        });
        assertEquals(contacts.body.contacts.map((x: { time_zone: string }) => x.time_zone), [
          "Asia/Kolkata",
          "America/New_York",
        ]);
        assertEquals(contacts.body.contacts[0].data, { customer: "Asha" });
        assertEquals(contacts.body.next_after, 1);
        const rest = await api.admin("/api/v1/campaigns.contacts", {
          campaign_id: c.campaign_id,
          after: 1,
        });
        assertEquals(rest.body.contacts.map((x: { number: string }) => x.number), [
          "+919810000002",
        ]);
        assertEquals(rest.body.next_after, null);
        const attempts = await api.admin("/api/v1/campaigns.attempts", {
          campaign_id: c.campaign_id,
        });
        assertEquals(attempts.body.attempts, []);
        const listed = await api.admin("/api/v1/campaigns.list", { agent_id: acme.agent_id });
        assertEquals(listed.body.campaigns.map((x: { campaign_id: string }) => x.campaign_id), [
          c.campaign_id,
        ]);
        assertEquals(listed.body.campaigns[0].progress.contacts.total, 3);
        const none = await api.admin("/api/v1/campaigns.list", { agent_id: other.agent_id });
        assertEquals(none.body.campaigns, []);
      },
    );

    await t.step("pause, resume, cancel: each from the states it names, else 409", async () => {
      const made = await api.admin("/api/v1/campaigns.create", good);
      const id = made.body.campaign.campaign_id;
      const step = async (verb: string) =>
        await api.admin(`/api/v1/campaigns.${verb}`, { campaign_id: id });
      assertEquals((await step("resume")).body.error.code, "campaign_state");
      assertEquals((await step("pause")).body.campaign.status, "paused");
      assertEquals((await step("resume")).body.campaign.status, "running");
      const cancelled = await step("cancel");
      assertEquals(cancelled.body.campaign.status, "cancelled");
      assertEquals(cancelled.body.campaign.progress.contacts.cancelled, 3);
      const again = await step("pause");
      assertEquals([again.status, again.body.error.details.status], [409, "cancelled"]);
      const missing = await api.admin("/api/v1/campaigns.get", { campaign_id: "cmp_nope" });
      assertEquals([missing.status, missing.body.error.code], [404, "campaign_not_found"]);
    });

    await t.step("a refused create writes nothing and names what it refused", async () => {
      const before = await campaignRows(api);
      const contacts = Array.from({ length: 50 }, (_, i) => ({ number: `+9198100${10000 + i}` }));
      contacts[41] = { number: "98100 10041" };
      const cases: [Record<string, unknown>, number, string, string | undefined][] = [
        [{ ...good, contacts }, 400, "invalid_request", "contacts[41].number"],
        [{ ...good, agent_id: "ag_nobody" }, 404, "agent_not_found", undefined],
        [{ ...good, from: "+912240000001" }, 403, "from_not_owned", "from"],
        [{ ...good, from: "+912240000009" }, 403, "from_not_owned", "from"],
        [{ ...good, trunk_id: "trk_none" }, 404, "trunk_not_found", undefined],
        [{ ...good, contacts: [] }, 400, "invalid_request", "contacts"],
        [
          { ...good, contacts: [{ number: "+919810000000", time_zone: "Mars/Base" }] },
          400,
          "invalid_request",
          "contacts[0].time_zone",
        ],
        [
          { ...good, window_start: "21:00", window_end: "09:00" },
          400,
          "invalid_request",
          "window_end",
        ],
        [{ ...good, retry_on: ["answered"] }, 400, "invalid_request", "retry_on"],
        [{ ...good, concurrency: 0 }, 400, "invalid_request", "concurrency"],
        [
          {
            ...good,
            contacts: Array.from({ length: 10_001 }, () => ({ number: "+919810000000" })),
          },
          400,
          "invalid_request",
          "contacts",
        ],
      ];
      for (const [body, status, code, field] of cases) {
        const r = await api.admin("/api/v1/campaigns.create", body);
        assertEquals([r.status, r.body.error?.code, r.body.error?.details?.field], [
          status,
          code,
          field,
        ]);
      }
      const bad = await api.admin("/api/v1/campaigns.create", { ...good, contacts });
      assert(bad.body.error.message.includes("Contact 41"), bad.body.error.message);
      assertEquals(await campaignRows(api), before);
    });

    await t.step(
      "10,000 contacts in one create (the body may exceed the usual 64 KiB)",
      async () => {
        const many = Array.from({ length: 10_000 }, (_, i) => ({
          number: `+9198${10_000_000 + i}`,
          data: { n: i },
        }));
        const r = await api.admin("/api/v1/campaigns.create", { ...good, contacts: many });
        assertEquals(r.status, 200, JSON.stringify(r.body).slice(0, 300));
        assertEquals(r.body.campaign.progress.contacts.pending, 10_000);
      },
    );
  } finally {
    await api.close();
  }
});
