// The four recording rules of the spec, on both key kinds and both agent defaults.
import { assertEquals } from "./helpers/assert.ts";
import { makeTenant, PAGE_ORIGIN, startTestApi, type TestApi } from "./helpers/api_server.ts";

const CONNECT = "/api/v1/sessions.connect";

async function recording(api: TestApi, sessionId: string) {
  const [row] = await api.db.sql`select record_requested, record_effective from sessions
    where id = ${sessionId}`;
  return [row.record_requested, row.record_effective];
}

Deno.test("recording rules", async (t) => {
  const api = await startTestApi();
  const off = await makeTenant(api, "off-by-default", { record_by_default: false });
  const on = await makeTenant(api, "on-by-default", { record_by_default: true });

  await t.step("rule 1: record omitted follows the agent's record_by_default", async () => {
    for (const [tenant, expected] of [[off, false], [on, true]] as const) {
      for (
        const [key, headers] of [[tenant.sk, {}], [tenant.pk, { origin: PAGE_ORIGIN }]] as const
      ) {
        const r = await api.post(CONNECT, { agent_id: tenant.agent_id }, key, headers);
        assertEquals(r.status, 200);
        assertEquals(await recording(api, r.body.session_id), [null, expected]);
      }
    }
  });

  await t.step(
    "rule 2: record false is honoured on either key, even when on by default",
    async () => {
      for (const [key, headers] of [[on.sk, {}], [on.pk, { origin: PAGE_ORIGIN }]] as const) {
        for (const body of [{ record: false }, { config: { record: false } }]) {
          const r = await api.post(CONNECT, { agent_id: on.agent_id, ...body }, key, headers);
          assertEquals(r.status, 200);
          assertEquals(await recording(api, r.body.session_id), [false, false]);
        }
      }
    },
  );

  await t.step("rule 3: record true on a pk_ key is 400 recording_not_permitted", async () => {
    const r = await api.post(CONNECT, { agent_id: on.agent_id, record: true }, on.pk, {
      origin: PAGE_ORIGIN,
    });
    assertEquals(r.status, 400);
    assertEquals(r.body.error.code, "recording_not_permitted");
  });

  await t.step(
    "rule 4: record true on an sk_ key is accepted, even when off by default",
    async () => {
      const r = await api.post(CONNECT, { agent_id: off.agent_id, record: true }, off.sk);
      assertEquals(r.status, 200);
      assertEquals(await recording(api, r.body.session_id), [true, true]);
    },
  );

  await api.close();
});
