// Sessions: the connect-time reservation, status transitions, and the record operators read.
import type { Sql } from "./client.ts";
import { type CallSpeech, callSpeech } from "../common/capabilities.ts";

export type SessionStatus = "created" | "connecting" | "active" | "ended" | "failed" | "expired";

export interface NewSession {
  session_id: string;
  agent_id: string;
  workspace_id: string;
  key_id: string | null;
  token_id: string;
  token_expires_at: Date;
  agent_input: unknown;
  display_name: string | null;
  metadata: Record<string, string>;
  record_requested: boolean | null;
  record_effective: boolean;
}

export interface ChosenNode {
  node_id: string;
  offer_base_url: string;
}

/**
 * Reserves a slot on the least loaded live node that serves the call's speech and writes the
 * session in one statement (so one transaction and one round trip). With no node to take it, the
 * session is still written, as `failed`/`no_worker`, for diagnosis; usage is written only when a
 * node was reserved.
 */
export async function openSession(
  sql: Sql,
  s: NewSession,
  staleSeconds: number,
  speech: CallSpeech = callSpeech(),
): Promise<ChosenNode | undefined> {
  const rows = await sql<ChosenNode[]>`
    with node as (
      update worker_nodes set active_calls = active_calls + 1
      where id = (
        select id from worker_nodes
        where not draining and active_calls < capacity
          and heartbeat_at > now() - make_interval(secs => ${staleSeconds})
          and jsonb_array_length(coalesce(serves -> ${speech.sttLanguage}::text -> 'stt',
            '[]'::jsonb)) > 0
          and jsonb_array_length(coalesce(serves -> ${speech.ttsLanguage}::text -> 'tts'
            -> ${speech.voice}::text, '[]'::jsonb)) > 0
        order by active_calls::float8 / greatest(capacity, 1), random()
        limit 1
        for update
      ) and active_calls < capacity
      returning id, offer_base_url
    ), session as (
      insert into sessions (id, agent_id, workspace_id, key_id, status, end_reason, node_id,
        token_id, token_expires_at, agent_input, display_name, metadata, record_requested,
        record_effective, ended_at)
      select ${s.session_id}, ${s.agent_id}, ${s.workspace_id}, ${s.key_id},
        case when node.id is null then 'failed' else 'created' end,
        case when node.id is null then 'no_worker' end,
        node.id, ${s.token_id}, ${s.token_expires_at}, ${sql.json(s.agent_input as never)},
        ${s.display_name}, ${sql.json(s.metadata)}, ${s.record_requested}, ${s.record_effective},
        case when node.id is null then now() end
      from (select 1) as one left join node on true
      returning node_id
    ), billed as (
      insert into usage (session_id, workspace_id, agent_id)
      select ${s.session_id}, ${s.workspace_id}, ${s.agent_id} from node
    )
    select node.id as node_id, node.offer_base_url from node, session`;
  return rows[0];
}

/** sessions.create: the record alone, with no node and no token handed out. */
export async function createSessionRecord(sql: Sql, s: NewSession): Promise<void> {
  await sql`insert into sessions (id, agent_id, workspace_id, key_id, status, token_id,
      token_expires_at, agent_input, display_name, metadata, record_requested, record_effective)
    values (${s.session_id}, ${s.agent_id}, ${s.workspace_id}, ${s.key_id}, 'created',
      ${s.token_id}, ${s.token_expires_at}, ${sql.json(s.agent_input as never)},
      ${s.display_name}, ${sql.json(s.metadata)}, ${s.record_requested}, ${s.record_effective})`;
}

/**
 * The offer was accepted: `created` → `connecting`, once. Returns false when the session is not
 * waiting for this token any more (already used, expired, ended), which is how reuse is refused.
 */
export async function markConnecting(
  sql: Sql,
  sessionId: string,
  tokenId: string,
  nodeId: string,
): Promise<boolean> {
  const rows = await sql`update sessions set status = 'connecting', connected_at = now()
    where id = ${sessionId} and token_id = ${tokenId} and node_id = ${nodeId}
      and status = 'created'
    returning id`;
  return rows.length === 1;
}

/**
 * The call started: `connecting` → `active`. Returns whether the call is to be recorded, or
 * undefined when the session was not connecting.
 */
export async function markActive(
  sql: Sql,
  sessionId: string,
): Promise<{ record: boolean } | undefined> {
  const rows = await sql<{ record_effective: boolean }[]>`
    update sessions set status = 'active', started_at = now()
    where id = ${sessionId} and status = 'connecting' returning record_effective`;
  return rows.length === 1 ? { record: rows[0].record_effective } : undefined;
}

/** What a call produced, written with its end. */
export interface CallOutcome {
  turns?: unknown[];
  recognisedSeconds?: number;
  synthesizedCharacters?: number;
  /** Engine name → its recognised seconds and synthesized characters on this call. */
  byEngine?: Record<string, unknown>;
  /** Where the recording was stored, when the call was recorded. */
  recordingUrl?: string | null;
}

/**
 * Ends a session that is not ended yet, releases its node reservation and books its usage: call
 * seconds, and what the call recognised and synthesized. Returns false when it had already ended.
 */
export async function finishSession(
  sql: Sql,
  sessionId: string,
  status: "ended" | "failed",
  reason: string,
  outcome: CallOutcome = {},
): Promise<boolean> {
  const turns = sql.json((outcome.turns ?? []) as never);
  const recognised = outcome.recognisedSeconds ?? 0;
  const characters = outcome.synthesizedCharacters ?? 0;
  const byEngine = sql.json((outcome.byEngine ?? {}) as never);
  const rows = await sql`
    with done as (
      update sessions set status = ${status}, end_reason = ${reason}, ended_at = now(),
        turns = ${turns}, recording_url = ${outcome.recordingUrl ?? null}
      where id = ${sessionId} and status in ('created', 'connecting', 'active')
      returning id, node_id, started_at, ended_at
    ), released as (
      update worker_nodes n set active_calls = greatest(n.active_calls - 1, 0)
      from done where n.id = done.node_id
    ), billed as (
      update usage u set
        call_seconds = coalesce(extract(epoch from done.ended_at - done.started_at), 0),
        recognised_seconds = ${recognised}, synthesized_characters = ${characters},
        by_engine = ${byEngine}
      from done where u.session_id = done.id
    )
    select id from done`;
  return rows.length === 1;
}

/** `created` sessions whose token ran out unused become `expired`; their slots are released. */
export async function expireUnused(sql: Sql): Promise<number> {
  const rows = await sql<{ n: number }[]>`
    with gone as (
      update sessions set status = 'expired', end_reason = 'token_expired', ended_at = now()
      where status = 'created' and token_expires_at < now()
      returning node_id
    ), per_node as (
      select node_id, count(*)::int as n from gone where node_id is not null group by node_id
    ), released as (
      update worker_nodes w set active_calls = greatest(w.active_calls - per_node.n, 0)
      from per_node where w.id = per_node.node_id
    )
    select count(*)::int as n from gone`;
  return rows[0].n;
}

export interface SessionRecord {
  session_id: string;
  agent_id: string;
  tenant: string;
  status: SessionStatus;
  end_reason: string | null;
  node_id: string | null;
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
  log: { at: Date; source: string; kind: string; data: unknown }[];
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
  node_id: string | null;
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
      s.node_id, s.created_at, s.connected_at, s.started_at, s.ended_at, s.turns,
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
    node_id: row.node_id,
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
