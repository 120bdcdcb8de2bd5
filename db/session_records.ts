// The session record operators read (sessions.get, sessions.list, the console): the session row
// with its workspace, usage and log, and the paging cursor of the list. The writes that move a
// session through its life are in sessions.ts.
import type { Sql } from "./client.ts";
import type { LoggedEvent } from "../common/session_events.ts";
import type { SessionStatus } from "./sessions.ts";
import type { DialState } from "../common/dial.ts";

export interface SessionRecord {
  session_id: string;
  agent_id: string;
  tenant: string;
  status: SessionStatus;
  end_reason: string | null;
  /** The brain's own reason when it ended the call (its EndSession text, ≤ 200 characters). */
  brain_end_reason: string | null;
  node_id: string | null;
  /** `outbound` when the service placed the call (calls.dial), else `inbound`. */
  direction: "inbound" | "outbound";
  /** How far an outbound call got (common/dial.ts DialState); null for inbound calls. */
  dial_state: DialState | null;
  timings: {
    created_at: Date;
    connected_at: Date | null;
    started_at: Date | null;
    ended_at: Date | null;
    turns: unknown[];
  };
  recording: { requested: boolean | null; effective: boolean; url: string | null };
  agent_input: unknown;
  display_name: string | null;
  metadata: Record<string, string>;
  /** The session log, oldest first: the events common/session_events.ts declares. */
  log: LoggedEvent[];
  usage: {
    call_seconds: number;
    recognised_seconds: number;
    synthesized_characters: number;
    /** Engine name → {recognised_seconds?, synthesized_characters?}. */
    by_engine: Record<string, unknown>;
  };
}

interface SessionRow {
  session_id: string;
  agent_id: string;
  workspace_id: string;
  tenant: string;
  status: SessionStatus;
  end_reason: string | null;
  brain_end_reason: string | null;
  node_id: string | null;
  direction: "inbound" | "outbound";
  dial_state: DialState | null;
  created_at: Date;
  connected_at: Date | null;
  started_at: Date | null;
  ended_at: Date | null;
  turns: unknown[];
  record_requested: boolean | null;
  record_effective: boolean;
  recording_url: string | null;
  agent_input: unknown;
  display_name: string | null;
  metadata: Record<string, string>;
  call_seconds: number | null;
  recognised_seconds: number | null;
  synthesized_characters: number | null;
  by_engine: Record<string, unknown> | null;
}

const SESSION_COLUMNS = (sql: Sql) =>
  sql`s.id as session_id, s.agent_id, s.workspace_id, w.name as tenant, s.status, s.end_reason,
      s.brain_end_reason, s.node_id, s.direction, s.dial_state, s.created_at, s.connected_at, s.started_at, s.ended_at, s.turns,
      s.record_requested, s.record_effective, s.recording_url, s.agent_input, s.display_name,
      s.metadata, u.call_seconds, u.recognised_seconds, u.synthesized_characters,
      u.by_engine`;

function toRecord(row: SessionRow, log: SessionRecord["log"]): SessionRecord {
  return {
    session_id: row.session_id,
    agent_id: row.agent_id,
    tenant: row.tenant,
    status: row.status,
    end_reason: row.end_reason,
    brain_end_reason: row.brain_end_reason,
    node_id: row.node_id,
    direction: row.direction,
    dial_state: row.dial_state,
    timings: {
      created_at: row.created_at,
      connected_at: row.connected_at,
      started_at: row.started_at,
      ended_at: row.ended_at,
      turns: row.turns,
    },
    recording: {
      requested: row.record_requested,
      effective: row.record_effective,
      url: row.recording_url,
    },
    agent_input: row.agent_input,
    display_name: row.display_name,
    metadata: row.metadata,
    log,
    usage: {
      call_seconds: row.call_seconds ?? 0,
      recognised_seconds: row.recognised_seconds ?? 0,
      synthesized_characters: row.synthesized_characters ?? 0,
      by_engine: row.by_engine ?? {},
    },
  };
}

/** The whole record, log included; `workspaceId` scopes it to one workspace when given. */
export async function getSession(
  sql: Sql,
  sessionId: string,
  scope: { workspace_id?: string; agent_id?: string } = {},
): Promise<(SessionRecord & { workspace_id: string }) | undefined> {
  const [row] = await sql<SessionRow[]>`
    select ${SESSION_COLUMNS(sql)}
    from sessions s join workspaces w on w.id = s.workspace_id
      left join usage u on u.session_id = s.id
    where s.id = ${sessionId}
      ${scope.workspace_id ? sql`and s.workspace_id = ${scope.workspace_id}` : sql``}
      ${scope.agent_id ? sql`and s.agent_id = ${scope.agent_id}` : sql``}`;
  if (!row) return undefined;
  const log = await sql<SessionRecord["log"]>`select at, source, kind, data from session_events
    where session_id = ${sessionId} order by id`;
  return { ...toRecord(row, log), workspace_id: row.workspace_id };
}

export type SessionCursor = { created_at: Date; session_id: string };

/** The opaque paging cursor of sessions.list: the created_at and id of a page's last row. */
export function encodeSessionCursor(
  s: { timings: { created_at: Date }; session_id: string },
): string {
  return btoa(JSON.stringify([s.timings.created_at.toISOString(), s.session_id]));
}

/** The cursor `encodeSessionCursor` made, or undefined for anything else. */
export function decodeSessionCursor(cursor: string | undefined): SessionCursor | undefined {
  if (!cursor) return undefined;
  try {
    const [at, id] = JSON.parse(atob(cursor));
    const created_at = new Date(at);
    if (typeof id !== "string" || isNaN(created_at.getTime())) return undefined;
    return { created_at, session_id: id };
  } catch {
    return undefined;
  }
}

export interface ListFilter {
  agent_id?: string;
  workspace_id?: string;
  status?: SessionStatus;
  limit: number;
  /** Opaque cursor from the previous page. */
  cursor?: SessionCursor;
}

/**
 * Newest first; the record without its log (sessions.get has that). Ordered at millisecond
 * precision, the precision of the cursor (a JS Date), so rows sharing a millisecond are paged
 * by id instead of being skipped.
 */
export async function listSessions(
  sql: Sql,
  f: ListFilter,
): Promise<Omit<SessionRecord, "log">[]> {
  const rows = await sql<SessionRow[]>`
    select ${SESSION_COLUMNS(sql)}
    from sessions s join workspaces w on w.id = s.workspace_id
      left join usage u on u.session_id = s.id
    where true
      ${f.agent_id ? sql`and s.agent_id = ${f.agent_id}` : sql``}
      ${f.workspace_id ? sql`and s.workspace_id = ${f.workspace_id}` : sql``}
      ${f.status ? sql`and s.status = ${f.status}` : sql``}
      ${
    f.cursor
      ? sql`and (date_trunc('milliseconds', s.created_at), s.id)
          < (${f.cursor.created_at}, ${f.cursor.session_id})`
      : sql``
  }
    order by date_trunc('milliseconds', s.created_at) desc, s.id desc
    limit ${f.limit}`;
  return rows.map((r) => {
    const { log: _log, ...rest } = toRecord(r, []);
    return rest;
  });
}
