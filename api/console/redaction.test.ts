// The console's redaction page: the agent page links to it, it shows the agent's categories
// checked, and saving it sets them as agents.redaction.set does (none checked: off).
import { assert, assertEquals } from "../../tests/helpers/assert.ts";
import { makeTenant, startTestApi } from "../../tests/helpers/api_server.ts";
import { signIn } from "../../tests/helpers/console_client.ts";

Deno.test("console: an agent's redaction is shown and saved", async () => {
  const api = await startTestApi();
  const op = await signIn(api);
  try {
    const { agent_id } = await makeTenant(api);
    const agentPage = await op.get(`/console/agents/${agent_id}`);
    assert(agentPage.html.includes(`/console/redaction/${agent_id}`), "no link to redaction");
    const read = async () =>
      (await api.admin("/api/v1/agents.redaction.get", { agent_id })).body.redaction.categories;

    const saved = await op.post(`/console/redaction/${agent_id}`, { card: "on", email: "on" });
    assertEquals(saved.status, 303);
    assertEquals(await read(), ["card", "email"]);
    const page = await op.get(`/console/redaction/${agent_id}`);
    assertEquals(page.status, 200);
    const ticked = [...page.html.matchAll(/name="(\w+)" value="on" checked/g)].map((m) => m[1]);
    assertEquals(ticked, ["card", "email"]);

    assertEquals((await op.post(`/console/redaction/${agent_id}`, {})).status, 303);
    assertEquals(await read(), []);
    assertEquals((await op.get("/console/redaction/ag_nobody")).status, 404);
  } finally {
    await api.close();
  }
});
