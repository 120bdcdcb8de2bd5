// The console's campaigns page: campaigns listed with their progress, pause/resume/cancel from the
// page, a move the campaign's status does not allow refused on the page with nothing changed.
import { assertEquals, assertMatch } from "../../tests/helpers/assert.ts";
import { makeTenant, startTestApi } from "../../tests/helpers/api_server.ts";
import { consoleClient, signIn } from "../../tests/helpers/console_client.ts";

Deno.test("console campaigns page", async (t) => {
  const api = await startTestApi();
  const op = await signIn(api);
  try {
    const acme = await makeTenant(api, "acme");
    await api.admin("/api/v1/numbers.create", { number: "+912240000000", agent_id: acme.agent_id });
    const made = await api.admin("/api/v1/campaigns.create", {
      agent_id: acme.agent_id,
      name: "January dues",
      from: "+912240000000",
      contacts: [{ number: "+919810000000" }, { number: "+919810000001" }],
    });
    const id = made.body.campaign.campaign_id;
    const status = async () =>
      (await api.db.sql`select status from campaigns where id = ${id}`)[0].status;

    await t.step("signed out, the page sends you to sign in", async () => {
      const page = await consoleClient(api).get("/console/campaigns");
      assertEquals(page.status, 303);
      assertMatch(page.location!, /sign-in/);
    });

    await t.step("the list shows each campaign's progress", async () => {
      const page = await op.get("/console/campaigns");
      assertEquals(page.status, 200);
      assertMatch(page.html, /January dues/);
      assertMatch(
        page.html,
        /0 of 2 finished: 0 done, 0 failed, 0 cancelled; 0 dialling, 2 pending/,
      );
      assertMatch(page.html, /09:00-21:00 Asia\/Kolkata/);
    });

    await t.step("pause, resume and cancel from the page", async () => {
      assertEquals((await op.post("/console/campaigns/pause", { campaign_id: id })).status, 303);
      assertEquals(await status(), "paused");
      assertEquals((await op.post("/console/campaigns/resume", { campaign_id: id })).status, 303);
      assertEquals(await status(), "running");
      assertEquals((await op.post("/console/campaigns/cancel", { campaign_id: id })).status, 303);
      assertEquals(await status(), "cancelled");
      const page = await op.get("/console/campaigns");
      assertMatch(page.html, /2 cancelled/);
      const refused = await op.post("/console/campaigns/resume", { campaign_id: id });
      assertEquals(refused.status, 409);
      assertMatch(refused.html, /cannot be running now/);
      assertEquals(await status(), "cancelled");
    });
  } finally {
    await api.close();
  }
});
