// The outbox writes on both databases: an event and its deliveries only for live endpoints that
// want it, written with the fact (a fact rolled back leaves none), and recording.stored's shape.
import { assertEquals } from "../tests/helpers/assert.ts";
import { testOnEveryDatabase } from "../tests/helpers/database.ts";
import { createAgent } from "./agents.ts";
import { createEndpoint, updateEndpoint } from "./webhooks.ts";
import { enqueueRecordingStored } from "./webhook_outbox.ts";
import { sessionWriter } from "../tests/helpers/webhook_sessions.ts";

testOnEveryDatabase(
  "events are queued only for live endpoints that want them, with their fact",
  async (db) => {
    const agent = await createAgent(db.sql, { tenant: "acme", name: "A", brain_url: "wss://b" });
    const other = await createAgent(db.sql, { tenant: "acme", name: "B", brain_url: "wss://b" });
    const endpoint = (id: string, agentId: string | null, types: string[]) =>
      createEndpoint(db.sql, {
        endpoint_id: id,
        workspace_id: agent.workspace_id,
        agent_id: agentId,
        url: "https://crm.example.com/",
        description: "",
        event_types: types,
        secret_sealed: "sealed",
      });
    await endpoint("whk_all", null, []);
    await endpoint("whk_ended", agent.agent_id, ["session.ended"]);
    await endpoint("whk_other", other.agent_id, []);
    await endpoint("whk_off", null, []);
    await updateEndpoint(db.sql, "whk_off", { enabled: false });
    const writer = await sessionWriter(db.sql, agent);
    const s = await writer.start();
    await writer.end(s);
    const rows = await db.sql<{ type: string; endpoint_id: string }[]>`
    select ev.type, d.endpoint_id from webhook_deliveries d join webhook_events ev
      on ev.id = d.event_id order by d.id`;
    assertEquals(rows.map((r) => `${r.type} ${r.endpoint_id}`), [
      "session.started whk_all",
      "session.ended whk_all",
      "session.ended whk_ended",
    ]);
    // A fact rolled back takes its event with it.
    const t = await writer.start();
    await db.sql.begin(async (tx) => {
      await tx`update sessions set status = 'ended' where id = ${t}`;
      await enqueueRecordingStored(tx, agent.workspace_id, {
        session_id: t,
        agent_id: agent.agent_id,
        url: "s3://bucket/acme/rec.wav",
        content_type: "audio/wav",
        bytes: 1,
        duration_seconds: 1,
      });
      throw new Error("rolled back");
    }).catch(() => {});
    const [{ n }] = await db.sql<{ n: number }[]>`select count(*)::int as n from webhook_events
    where type = 'recording.stored'`;
    assertEquals(n, 0);
    const id = await enqueueRecordingStored(db.sql, agent.workspace_id, {
      session_id: t,
      agent_id: agent.agent_id,
      url: "s3://bucket/acme/rec.wav",
      transcript_url: "s3://bucket/acme/rec.json",
      content_type: "audio/wav",
      bytes: 96044,
      duration_seconds: 3,
    });
    const [ev] = await db.sql<{ body: string }[]>`select body from webhook_events where id = ${id}`;
    const body = JSON.parse(ev.body);
    assertEquals(body.type, "recording.stored");
    assertEquals(body.data.url, "s3://bucket/acme/rec.wav");
    assertEquals(typeof body.timestamp, "string");
  },
);
