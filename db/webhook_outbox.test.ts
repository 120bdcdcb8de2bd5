// The outbox writes on both databases: an event and its deliveries only for live endpoints that
// want it, written with the fact (a fact rolled back leaves none), and recording.stored's shape.
import { assert, assertEquals } from "../tests/helpers/assert.ts";
import { appendEvents } from "./events.ts";
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

testOnEveryDatabase(
  "a log batch's transfer outcome and key presses queue phone events, never the digits",
  async (db) => {
    const agent = await createAgent(db.sql, { tenant: "acme", name: "A", brain_url: "wss://b" });
    await createEndpoint(db.sql, {
      endpoint_id: "whk_phone",
      workspace_id: agent.workspace_id,
      agent_id: null,
      url: "https://crm.example.com/",
      description: "",
      event_types: ["phone.transfer", "phone.keypad"],
      secret_sealed: "sealed",
    });
    const writer = await sessionWriter(db.sql, agent);
    const s = await writer.start();
    await appendEvents(db.sql, [
      { session_id: s, source: "phone", kind: "dtmf", data: { digit: "7", duration_ms: 80 } },
      { session_id: s, source: "phone", kind: "dtmf", data: { digit: "3", duration_ms: 80 } },
      { session_id: s, source: "worker", kind: "transfer_requested", data: { target: "+9122" } },
      {
        session_id: s,
        source: "worker",
        kind: "transfer_failed",
        data: { target: "+912240000001", detail: "SIP 486", reason: "busy" },
      },
    ]);
    const logged = await db
      .sql`select count(*)::int as n from session_events where session_id = ${s}`;
    assertEquals(logged[0].n, 4);
    const rows = await db.sql<{ type: string; body: string }[]>`select ev.type, ev.body
    from webhook_deliveries d join webhook_events ev on ev.id = d.event_id order by d.id`;
    assertEquals(rows.map((r) => r.type), ["phone.transfer", "phone.keypad"]);
    const transfer = JSON.parse(rows[0].body).data;
    assertEquals(transfer, {
      session_id: s,
      agent_id: agent.agent_id,
      outcome: "failed",
      target: "+912240000001",
      reason: "busy",
      detail: "SIP 486",
    });
    const keypad = JSON.parse(rows[1].body).data;
    assertEquals(keypad, { session_id: s, agent_id: agent.agent_id, keys_pressed: 2 });
    assert(!/"digit"|"7"|"3"/.test(rows[1].body), rows[1].body);
  },
);
