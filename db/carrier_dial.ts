// An outbound session placed through a carrier's call API (api/telephony/dial.ts): what its status
// webhooks need to know of it, and the carrier's id of the call, written once the carrier gave it.
import type { Sql } from "./client.ts";
import type { SessionStatus } from "./sessions.ts";

export interface OutboundSessionState {
  status: SessionStatus;
  direction: "inbound" | "outbound";
  dial_state: string | null;
  metadata: Record<string, unknown>;
}

export async function outboundSessionState(
  sql: Sql,
  sessionId: string,
): Promise<OutboundSessionState | undefined> {
  const [row] = await sql<OutboundSessionState[]>`
    select status, direction, dial_state, metadata from sessions where id = ${sessionId}`;
  return row;
}

/**
 * Keeps the carrier's id of an outbound call in the session's metadata (phone_call_id, as an
 * inbound call's), so its status webhooks can be matched to it; written once, never replaced.
 */
export async function recordCarrierCallId(
  sql: Sql,
  sessionId: string,
  callId: string,
): Promise<boolean> {
  const rows = await sql`
    update sessions
    set metadata = metadata || jsonb_build_object('phone_call_id', ${callId.slice(0, 256)}::text)
    where id = ${sessionId} and direction = 'outbound' and not metadata ? 'phone_call_id'
    returning id`;
  return rows.length === 1;
}

/** What re-issuing an outbound session's stream token takes: the reservation as it was written. */
export interface OutboundStreamGrant {
  status: SessionStatus;
  direction: "inbound" | "outbound";
  metadata: Record<string, unknown>;
  agent_id: string;
  workspace_id: string;
  node_id: string | null;
  offer_base_url: string | null;
  token_id: string | null;
  token_expires_at: Date | null;
  agent_input: unknown;
}

export async function outboundStreamGrant(
  sql: Sql,
  sessionId: string,
): Promise<OutboundStreamGrant | undefined> {
  const [row] = await sql<OutboundStreamGrant[]>`
    select s.status, s.direction, s.metadata, s.agent_id, s.workspace_id, s.node_id,
      n.offer_base_url, s.token_id, s.token_expires_at, s.agent_input
    from sessions s left join worker_nodes n on n.id = s.node_id
    where s.id = ${sessionId}`;
  return row;
}
