// The outbox half of the statements that write a session's start and end (db/sessions.ts,
// db/nodes.ts): a CTE calling webhook_enqueue (db/migrations/0011_webhooks.sql) for each row the
// statement changed, so the event commits or rolls back with the fact. The statement's final
// select must read `event_id` from it (a CTE nobody reads is never run).
import type { Sql } from "./client.ts";
import {
  type PhoneHook,
  type RecordingStored,
  sessionEndedData,
  type WebhookEventType,
} from "../common/webhooks/events.ts";
import { keptBrainEndReason } from "./brain_end_reason.ts";

/** What enqueueEnded reads of db/sessions.ts CallOutcome (kept apart: no import circle). */
export interface EndOutcome {
  turns?: unknown[];
  recognisedSeconds?: number;
  synthesizedCharacters?: number;
  byEngine?: Record<string, unknown>;
  recordingUrl?: string | null;
  brainEndReason?: string | null;
}

/**
 * `select webhook_enqueue(...) as event_id from <rows>`: `rows` is the CTE of changed sessions,
 * with id, workspace_id, agent_id, direction, metadata, created_at, started_at (and ended_at,
 * call_seconds for an end); `data` is merged over what those columns say.
 */
export function enqueueFor(
  sql: Sql,
  type: WebhookEventType,
  rows: string,
  data: Record<string, unknown>,
) {
  const r = sql(rows);
  const ended = type === "session.ended"
    ? sql`|| jsonb_build_object('ended_at', ${r}.ended_at,
          'call_seconds', greatest(coalesce(extract(epoch from ${r}.ended_at - ${r}.started_at), 0), 0))`
    : sql``;
  return sql`select webhook_enqueue(${type}, ${r}.workspace_id, ${r}.agent_id, ${r}.id,
      jsonb_build_object('session_id', ${r}.id, 'agent_id', ${r}.agent_id,
        'workspace_id', ${r}.workspace_id, 'direction', ${r}.direction,
        'metadata', ${r}.metadata, 'created_at', ${r}.created_at, 'started_at', ${r}.started_at)
      ${ended} || ${sql.json(data as never)}::jsonb) as event_id
    from ${r}`;
}

/** session.ended for the sessions in `rows`, with what the writer of the end knows. */
export function enqueueEnded(
  sql: Sql,
  rows: string,
  status: "ended" | "failed",
  reason: string,
  outcome: EndOutcome = {},
) {
  return enqueueFor(
    sql,
    "session.ended",
    rows,
    sessionEndedData({
      status,
      end_reason: reason,
      brain_end_reason: keptBrainEndReason(outcome.brainEndReason),
      turns: outcome.turns ?? [],
      recognised_seconds: outcome.recognisedSeconds ?? 0,
      synthesized_characters: outcome.synthesizedCharacters ?? 0,
      by_engine: outcome.byEngine ?? {},
      recording_url: outcome.recordingUrl ?? null,
    }),
  );
}

/**
 * recording.stored for a session whose recording reached its storage. Call it on the transaction
 * (or in the statement) that records the upload as done, so the event commits with that fact; it
 * is ordered after the session's session.ended to each endpoint. The event's id, or null when no
 * endpoint of the workspace wants it.
 */
export async function enqueueRecordingStored(
  sql: Sql,
  workspaceId: string,
  data: RecordingStored,
): Promise<string | null> {
  const [row] = await sql<{ event_id: string | null }[]>`
    select webhook_enqueue('recording.stored', ${workspaceId}, ${data.agent_id},
      ${data.session_id}, ${sql.json(data as never)}::jsonb) as event_id`;
  return row.event_id;
}

/**
 * `select webhook_enqueue(...) as event_id` for a log batch's phone events, one per row in the
 * batch's order (a function scan keeps it, so a session's events are queued in order).
 */
export function enqueuePhone(sql: Sql, hooks: PhoneHook[]) {
  return sql`select webhook_enqueue(h.type,
      (select workspace_id from sessions where id = h.session_id),
      (select agent_id from sessions where id = h.session_id), h.session_id,
      jsonb_build_object('session_id', h.session_id,
        'agent_id', (select agent_id from sessions where id = h.session_id)) || h.data) as event_id
    from jsonb_to_recordset(${sql.json(hooks as never)}::jsonb)
      as h(session_id text, type text, data jsonb)`;
}

/**
 * campaign.attempt_done for the settled attempts in `rows` (db/campaign_dialing.ts
 * settleAttempts: campaign_id, contact_index, attempt, outcome, session_id, retry, workspace_id,
 * agent_id), queued in the statement that settles them; ordered after the session's own events.
 */
export function enqueueAttemptDone(sql: Sql, rows: string) {
  const r = sql(rows);
  return sql`select webhook_enqueue('campaign.attempt_done', ${r}.workspace_id, ${r}.agent_id,
      ${r}.session_id, jsonb_build_object('campaign_id', ${r}.campaign_id,
        'contact_index', ${r}.contact_index, 'attempt', ${r}.attempt, 'outcome', ${r}.outcome,
        'session_id', ${r}.session_id, 'agent_id', ${r}.agent_id,
        'will_retry', ${r}.retry and ${r}.campaign_status <> 'cancelled')) as event_id
    from ${r}`;
}
