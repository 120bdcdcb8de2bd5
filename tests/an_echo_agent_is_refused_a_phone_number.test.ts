// The echo diagnostic (brain URL `echo:`) is a web call's: a phone call's brain is dialled by the
// worker, so an echo: agent behind a number failed every call `brain_unreachable`. It is refused
// where the number is made (numbers.create, numbers.update) and where an agent with numbers would
// become one (agents.update), with a clear error, and the refused request changes nothing.
import { assertEquals } from "./helpers/assert.ts";
import { startTestApi } from "./helpers/api_server.ts";

Deno.test("an echo: agent gets no phone number, and an agent with a number does not become echo:", async () => {
  const api = await startTestApi({}, { node: false });
  try {
    const create = (name: string, brain_url: string) =>
      api.admin("/api/v1/agents.create", { tenant: "acme", name, brain_url });
    const echo = (await create("Echo", "echo:")).body.agent.agent_id;
    const real = (await create("Reception", "wss://brain.example.test/voice")).body.agent.agent_id;

    const refused = await api.admin("/api/v1/numbers.create", {
      number: "+15550100",
      agent_id: echo,
    });
    assertEquals([refused.status, refused.body.error.code], [400, "echo_agent_on_phone"]);
    assertEquals(
      (await api.admin("/api/v1/numbers.get", { number: "+15550100" })).status,
      404,
    );

    assertEquals(
      (await api.admin("/api/v1/numbers.create", { number: "+15550100", agent_id: real })).status,
      200,
    );
    const moved = await api.admin("/api/v1/numbers.update", {
      number: "+15550100",
      agent_id: echo,
    });
    assertEquals([moved.status, moved.body.error.code], [400, "echo_agent_on_phone"]);
    const turned = await api.admin("/api/v1/agents.update", { agent_id: real, brain_url: "echo:" });
    assertEquals([turned.status, turned.body.error.code], [400, "echo_agent_on_phone"]);

    const number = (await api.admin("/api/v1/numbers.get", { number: "+15550100" })).body;
    assertEquals(number.phone_number.agent_id, real);
    const agent = (await api.admin("/api/v1/agents.get", { agent_id: real })).body;
    assertEquals(agent.agent.brain_url, "wss://brain.example.test/voice");
  } finally {
    await api.close();
  }
});
