// A session's life written the way the API and the worker write it (db/sessions.ts: reserve,
// connecting, active, end), for the webhook tests that need many sessions without many calls.
import type { Pool } from "../../db/client.ts";
import { registerNode } from "../../db/nodes.ts";
import { finishSession, markActive, markConnecting, openSession } from "../../db/sessions.ts";
import { newId } from "../../common/ids.ts";

/** One turn record as media/call/turn_record.ts writes it, cut off by the caller. */
export const CUT_TURN = {
  turn_id: "t1",
  trigger: "speech",
  user_text: "when do you close",
  started_at: "2026-12-02T04:00:00.000Z",
  marks: {},
  latency_ms: { end_of_turn: 400, brain: 150, end_to_first_audio: 650 },
  units: [{ unit_id: "u1", text: "We close at six today.", heard: "We close", cut_off: true }],
  interrupted: true,
  engines: { synthesis: ["espeak-ng"] },
};

export async function sessionWriter(sql: Pool, agent: { agent_id: string; workspace_id: string }) {
  const nodeId = `node-${newId("ses").slice(4, 12)}`;
  await registerNode(sql, {
    node_id: nodeId,
    offer_base_url: "http://127.0.0.1:9",
    capacity: 10_000,
  });
  return {
    /** A session connected and started (session.started queued); its id. */
    async start(): Promise<string> {
      const s = {
        session_id: newId("ses"),
        agent_id: agent.agent_id,
        workspace_id: agent.workspace_id,
        key_id: null,
        token_id: newId("tok"),
        token_expires_at: new Date(Date.now() + 60_000),
        agent_input: { init: null },
        display_name: null,
        metadata: { order: "A-17" },
        record_requested: null,
        record_effective: false,
      };
      const node = await openSession(sql, s, 60);
      if (!node) throw new Error("no node took the session");
      if (await markConnecting(sql, s.session_id, s.token_id, node.node_id) !== "connected") {
        throw new Error("not connecting");
      }
      if (!await markActive(sql, s.session_id)) throw new Error("not active");
      return s.session_id;
    },
    /** The call's end as the worker writes it (session.ended queued). */
    async end(sessionId: string): Promise<void> {
      const ok = await finishSession(sql, sessionId, "ended", "caller_hung_up", {
        turns: [CUT_TURN],
        recognisedSeconds: 1.2,
        synthesizedCharacters: 22,
        byEngine: { "espeak-ng": { synthesized_characters: 22 } },
      });
      if (!ok) throw new Error("already ended");
    },
  };
}
