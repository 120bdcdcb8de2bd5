// Per-agent turn sensitivity (common/turn_sensitivity.ts) through the admin API and the real
// database: stored on the agent, refused when not low/medium/high (nothing changes), and carried
// into each web call's config (which the worker reads) unless the call chose its own.
import { assertEquals } from "./helpers/assert.ts";
import { startTestApi } from "./helpers/api_server.ts";

Deno.test("an agent's turn sensitivity reaches its calls unless a call chooses", async () => {
  const api = await startTestApi();
  try {
    const made = await api.admin("/api/v1/agents.create", {
      tenant: "acme",
      name: "Patient",
      brain_url: "wss://brain.acme.example/voice",
      turn_patience: "high",
    });
    assertEquals(made.status, 200, JSON.stringify(made.body));
    const { agent, session_key } = made.body;
    assertEquals([agent.interruption_sensitivity, agent.turn_patience], ["medium", "high"]);

    const configOf = async (body: Record<string, unknown>) => {
      const r = await api.post(
        "/api/v1/sessions.connect",
        { agent_id: agent.agent_id, ...body },
        session_key,
      );
      assertEquals(r.status, 200, JSON.stringify(r.body));
      const [row] = await api.db
        .sql`select agent_input from sessions where id = ${r.body.session_id}`;
      return row.agent_input.config;
    };
    // The agent's non-default level goes with the call; the default one is left implicit.
    assertEquals(await configOf({}), { turn_patience: "high" });
    // The call's own choice wins over the agent's.
    assertEquals(
      await configOf({ config: { turn_patience: "low", interruption_sensitivity: "high" } }),
      { turn_patience: "low", interruption_sensitivity: "high" },
    );

    const bad = await api.admin("/api/v1/agents.update", {
      agent_id: agent.agent_id,
      interruption_sensitivity: "max",
      name: "Renamed",
    });
    assertEquals([bad.status, bad.body.error.code, bad.body.error.details], [
      400,
      "invalid_request",
      {
        field: "interruption_sensitivity",
        allowed: ["low", "medium", "high"],
      },
    ]);
    const [row] = await api.db.sql`select name, interruption_sensitivity from agents
      where id = ${agent.agent_id}`;
    assertEquals([row.name, row.interruption_sensitivity], ["Patient", "medium"]);

    // The cached key grant sees the change at once.
    const upd = await api.admin("/api/v1/agents.update", {
      agent_id: agent.agent_id,
      interruption_sensitivity: "low",
      turn_patience: "medium",
    });
    assertEquals(upd.body.agent.interruption_sensitivity, "low");
    assertEquals(await configOf({}), { interruption_sensitivity: "low" });
  } finally {
    await api.close();
  }
});
