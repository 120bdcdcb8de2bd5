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
