// Sessions: the connect-time reservation and the status transitions of a session's life (the
// record operators read is session_records.ts).
import type { Sql } from "./client.ts";
import { textArray } from "./text_array.ts";
import { enqueueEnded, enqueueFor } from "./webhook_outbox.ts";
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
  /** Where the node takes SIP calls (null when it runs no SIP). */
  sip_address: string | null;
  sip_port: number | null;
}

/** What a connect's reservation may take beyond a node slot (docs/security.md). */
export interface Admission {
  /**
   * Seconds the slot stays reserved while no offer has come (never past the token's expiry);
   * absent, until the token expires.
   */
  holdSeconds?: number;
  /**
   * Sessions of the same key that may hold a slot waiting for their offer; 0 or absent: no limit.
   * Counted in the reservation's own statement, so concurrent connects of one key can overshoot
   * it by at most the number of reservations in flight at that instant.
   */
  pendingPerKey?: number;
  /**
   * A phone call: with no node to take it nothing is written (a refused INVITE or provider
   * webhook leaves no trace, as a refused connect does; the 503 is the record).
   */
  phone?: boolean;
  /** Only a node that registered a SIP address and port may take it (a call arriving over SIP). */
  sip?: boolean;
  /**
   * Keys this admission uses once (a digest nonce, a carrier's call id, a signature nonce), kept
   * `seconds`: one already used refuses the session and nothing is written.
   */
  once?: { keys: string[]; seconds: number };
  /** A phone call's trunk and its cap of sessions holding a slot before their call starts. */
  trunk?: { id: string; pending: number };
  /** A phone call's source address and its cap of sessions holding a slot before they start. */
  source?: { key: string; pending: number };
  /** A call the service places (calls.dial): written `outbound`, its dial state `dialing`. */
  outbound?: boolean;
}

export type Reservation =
  | { kind: "reserved"; node: ChosenNode }
  /**
   * No live node serves the call; the session was written `failed`/`no_worker` (nothing at all
   * for a phone call).
   */
  | { kind: "no_node" }
  /**
   * The key (or the trunk, or the source address) has its limit of sessions waiting for their
   * offer; nothing was written.
   */
  | { kind: "pending_limit"; retryAfterSeconds: number; limit: "key" | "trunk" | "source" }
  /** Live nodes serve the call but none has room now (nothing written for a phone call). */
  | { kind: "full" }
  /** One of the `once` keys was used before; nothing was written. */
  | { kind: "replayed" };

/** Sessions holding a slot before they start, where `column` is `value` (none when undefined). */
function waiting(sql: Sql, column: string, value: string | undefined) {
  return value === undefined
    ? sql`select 0 as n, null::timestamptz as first_ends`
    : sql`select count(*)::int as n, min(hold_until) as first_ends from sessions
        where ${sql(column)} = ${value} and status = 'created' and holds_slot
          and hold_until > now()`;
}

/**
 * Reserves a slot on the least loaded live node that serves the call's speech and writes the
 * session in one statement (so one transaction and one round trip). With no node to take it, the
 * session is still written, as `failed`/`no_worker`, for diagnosis; usage is written only when a
 * node was reserved. A key already at its limit of sessions waiting for their offer writes
 * nothing at all.
 */
export async function reserveSession(
  sql: Sql,
  s: NewSession,
  staleSeconds: number,
  speech: CallSpeech = callSpeech(),
  admission: Admission = {},
): Promise<Reservation> {
  const limit = admission.pendingPerKey ?? 0;
  const pending = waiting(sql, "key_id", limit > 0 && s.key_id !== null ? s.key_id : undefined);
  const trunkLimit = admission.trunk?.pending ?? 0;
  const trunkPending = waiting(
    sql,
    "phone_trunk_id",
    trunkLimit > 0 ? admission.trunk?.id : undefined,
  );
  const sourceLimit = admission.source?.pending ?? 0;
  const sourcePending = waiting(
    sql,
    "phone_source",
    sourceLimit > 0 ? admission.source?.key : undefined,
  );
  const onceKeys = admission.once?.keys ?? [];
  const once = textArray(sql, onceKeys);
  const phone = admission.phone === true;
  const sipOnly = admission.sip === true;
  const holdUntil = admission.holdSeconds === undefined
    ? sql`${s.token_expires_at}::timestamptz`
    : sql`least(now() + make_interval(secs => ${admission.holdSeconds}),
        ${s.token_expires_at}::timestamptz)`;
  let rows;
  try {
    rows = await sql<
      {
        admitted: boolean;
        replayed: boolean;
        over: "key" | "trunk" | "source" | null;
        retry_after: number | null;
        serving: number;
        node_id: string | null;
        offer_base_url: string | null;
        sip_address: string | null;
        sip_port: number | null;
      }[]
    >`
    with pending as (${pending}), trunk_pending as (${trunkPending}),
    source_pending as (${sourcePending}), replayed as (
      select exists (select 1 from admission_keys where key = any(${once})
        and expires_at > now()) as yes
    ), over as (
      select case
        when ${limit} > 0 and (select n from pending) >= ${limit} then 'key'
        when ${trunkLimit} > 0 and (select n from trunk_pending) >= ${trunkLimit} then 'trunk'
        when ${sourceLimit} > 0 and (select n from source_pending) >= ${sourceLimit} then 'source'
      end as which
    ), admitted as (
      select (select which from over) is null and not (select yes from replayed) as ok
    ), serving as (
      select id, active_calls < capacity as room, active_calls::float8 / greatest(capacity, 1)
        as load
      from worker_nodes
      where not draining
        and (not ${sipOnly}::boolean or sip_port is not null)
        and heartbeat_at > now() - make_interval(secs => ${staleSeconds})
        and jsonb_array_length(coalesce(serves -> ${speech.sttLanguage}::text -> 'stt',
          '[]'::jsonb)) > 0
        and jsonb_array_length(coalesce(serves -> ${speech.ttsLanguage}::text -> 'tts'
          -> ${speech.voice}::text, '[]'::jsonb)) > 0
    ), node as (
      update worker_nodes set active_calls = active_calls + 1
      where (select ok from admitted) and id = (
        select w.id from worker_nodes w join serving on serving.id = w.id
        where serving.room
        order by serving.load, random()
        limit 1
        for update of w
      ) and active_calls < capacity
      returning id, offer_base_url, sip_address, sip_port
    ), session as (
      insert into sessions (id, agent_id, workspace_id, key_id, status, end_reason, node_id,
        token_id, token_expires_at, agent_input, display_name, metadata, record_requested,
        record_effective, ended_at, holds_slot, hold_until, phone_trunk_id, phone_source,
        direction, dial_state)
      select ${s.session_id}, ${s.agent_id}, ${s.workspace_id}, ${s.key_id},
        case when node.id is null then 'failed' else 'created' end,
        case when node.id is null then 'no_worker' end,
        node.id, ${s.token_id}, ${s.token_expires_at}, ${sql.json(s.agent_input as never)},
        ${s.display_name}, ${sql.json(s.metadata)}, ${s.record_requested}, ${s.record_effective},
        case when node.id is null then now() end,
        node.id is not null,
        case when node.id is not null then ${holdUntil} end,
        ${admission.trunk?.id ?? null}, ${admission.source?.key ?? null},
        ${admission.outbound ? "outbound" : "inbound"}, ${admission.outbound ? "dialing" : null}
      from (select 1) as one left join node on true
      where (select ok from admitted) and (node.id is not null
        or (not ${phone}::boolean and not exists (select 1 from serving)))
      returning node_id
    ), billed as (
      insert into usage (session_id, workspace_id, agent_id)
      select ${s.session_id}, ${s.workspace_id}, ${s.agent_id} from node
    ), used as (
      insert into admission_keys (key, session_id, expires_at)
      select k, ${s.session_id}, now() + make_interval(secs => ${admission.once?.seconds ?? 0})
      from node, unnest(${once}) as k
    )
    select (select ok from admitted) as admitted, (select yes from replayed) as replayed,
      (select which from over) as over,
      (select greatest(1, ceil(extract(epoch from least(
        (select first_ends from pending where ${limit} > 0),
        (select first_ends from trunk_pending where ${trunkLimit} > 0),
        (select first_ends from source_pending where ${sourceLimit} > 0)) - now())))::int)
        as retry_after,
      (select count(*) from serving)::int as serving,
      node.id as node_id, node.offer_base_url, node.sip_address, node.sip_port
    from (select 1) as one left join node on true`;
  } catch (err) {
    // Another process used one of the `once` keys in the same instant: the primary key refused
    // it and the whole statement was undone.
    if ((err as { code?: string }).code === "23505" && onceKeys.length > 0) {
      return { kind: "replayed" };
    }
    throw err;
  }
  const row = rows[0];
  if (row.replayed) return { kind: "replayed" };
  if (!row.admitted) {
    return {
      kind: "pending_limit",
      retryAfterSeconds: row.retry_after ?? 1,
      limit: row.over ?? "key",
    };
  }
  if (row.node_id === null) return row.serving > 0 ? { kind: "full" } : { kind: "no_node" };
  return {
    kind: "reserved",
    node: {
      node_id: row.node_id,
      offer_base_url: row.offer_base_url!,
      sip_address: row.sip_address,
      sip_port: row.sip_port,
    },
  };
}

/** Forgets the `once` keys whose time is over (the sweeper's). */
export async function forgetExpiredAdmissionKeys(sql: Sql): Promise<number> {
  const rows = await sql`delete from admission_keys where expires_at <= now() returning key`;
  return rows.length;
}

/**
 * reserveSession without the per-key limit: the chosen node, or undefined when none could take
 * the session.
 */
export async function openSession(
  sql: Sql,
  s: NewSession,
  staleSeconds: number,
  speech: CallSpeech = callSpeech(),
  admission: Omit<Admission, "pendingPerKey"> = {},
): Promise<ChosenNode | undefined> {
  const r = await reserveSession(sql, s, staleSeconds, speech, admission);
  return r.kind === "reserved" ? r.node : undefined;
}

/** sessions.create: the record alone, with no node and no token handed out. */
export async function createSessionRecord(sql: Sql, s: NewSession): Promise<void> {
  await sql`insert into sessions (id, agent_id, workspace_id, key_id, status, token_id,
      token_expires_at, agent_input, display_name, metadata, record_requested, record_effective)
    values (${s.session_id}, ${s.agent_id}, ${s.workspace_id}, ${s.key_id}, 'created',
      ${s.token_id}, ${s.token_expires_at}, ${sql.json(s.agent_input as never)},
      ${s.display_name}, ${sql.json(s.metadata)}, ${s.record_requested}, ${s.record_effective})`;
}

export type Connecting =
  /** The session is now `connecting` and holds its node slot. */
  | "connected"
  /** Its pre-offer hold had lapsed and the node has no room now; the session stays `created`. */
  | "node_full"
  /** Not waiting for this token on this node any more (used, expired, ended, or never). */
  | "not_waiting";

/**
 * The offer was accepted: `created` → `connecting`, once. A session whose pre-offer hold lapsed
 * (its slot went back to the node) takes a slot again here, in the same statement, only if the
 * node has room; otherwise it is left as it was. `not_waiting` is how reuse is refused.
 */
export async function markConnecting(
  sql: Sql,
  sessionId: string,
  tokenId: string,
  nodeId: string,
): Promise<Connecting> {
  // `target` locks the row, so of two offers racing on one token only one sees it `created`.
  const rows = await sql<{ found: boolean; connected: boolean }[]>`
    with target as (
      select id, holds_slot from sessions
      where id = ${sessionId} and token_id = ${tokenId} and node_id = ${nodeId}
        and status = 'created'
      for update
    ), retaken as (
      update worker_nodes set active_calls = active_calls + 1
      where id = ${nodeId} and active_calls < capacity
        and exists (select 1 from target where not holds_slot)
      returning id
    ), done as (
      update sessions s set status = 'connecting', connected_at = now(), holds_slot = true,
        hold_until = null
      from target
      where s.id = target.id and (target.holds_slot or exists (select 1 from retaken))
      returning s.id
    )
    select exists (select 1 from target) as found, exists (select 1 from done) as connected`;
  if (rows[0].connected) return "connected";
  return rows[0].found ? "node_full" : "not_waiting";
}

/** What the offer endpoint needs to know of a session before it reads the offer. */
export interface SessionTokenState {
  status: SessionStatus;
  token_id: string | null;
  node_id: string | null;
  token_expires_at: Date | null;
  /** Whether it is counted in its node's active calls (false once its pre-offer hold lapsed). */
  holds_slot: boolean;
  /** Whether its node has a free slot now (false without a node). */
  node_has_room: boolean;
  /** `outbound` for a session reserved for a call the service places (issue 34). */
  direction: "inbound" | "outbound";
}

export async function sessionTokenState(
  sql: Sql,
  sessionId: string,
): Promise<SessionTokenState | undefined> {
  const [row] = await sql<SessionTokenState[]>`select s.status, s.token_id, s.node_id,
      s.token_expires_at, s.holds_slot, s.direction,
      coalesce(n.active_calls < n.capacity, false) as node_has_room
    from sessions s left join worker_nodes n on n.id = s.node_id
    where s.id = ${sessionId}`;
  return row;
}

/** The call started: `connecting` → `active`, and session.started queued (webhooks). Whether the
 * call is to be recorded; undefined when the session was not connecting. */
export async function markActive(
  sql: Sql,
  sessionId: string,
): Promise<{ record: boolean; echoCancellation: string } | undefined> {
  // The agent's echo cancellation is read here, at the call's start, as recording is.
  const rows = await sql<{ record_effective: boolean; echo: string | null }[]>`
    with done as (
      update sessions set status = 'active', started_at = now()
      where id = ${sessionId} and status = 'connecting'
      returning id, workspace_id, agent_id, direction, metadata, created_at, started_at, record_effective
    ), hooked as (${enqueueFor(sql, "session.started", "done", {})})
    select record_effective,
      (select a.echo_cancellation from agents a where a.id = done.agent_id) as echo,
      (select count(event_id) from hooked) as hooked from done`;
  return rows.length === 1
    ? { record: rows[0].record_effective, echoCancellation: rows[0].echo ?? "auto" }
    : undefined;
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
  /** The brain's own reason, when it ended the call (EndSession's text, cut to 200 characters). */
  brainEndReason?: string | null;
  /** How long before this write the call ended (worker's clock): a late end (the database came
   * back after an outage) ends at `now() - endedSecondsAgo`, so the outage is not billed. */
  endedSecondsAgo?: number;
}

export { BRAIN_END_REASON_CHARS, keptBrainEndReason } from "./brain_end_reason.ts";
import { keptBrainEndReason } from "./brain_end_reason.ts";

/** Ends a session not ended yet, releases its node slot (if held), books its usage (call seconds,
 * recognised, synthesized) and queues session.ended (webhooks). False when it had already ended. */
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
  const ago = Math.max(0, outcome.endedSecondsAgo ?? 0);
  const rows = await sql`
    with before as (
      select id, holds_slot from sessions
      where id = ${sessionId} and status in ('created', 'connecting', 'active')
      for update
    ), done as (
      update sessions s set status = ${status}, end_reason = ${reason},
        ended_at = now() - make_interval(secs => ${ago}), turns = ${turns},
        recording_url = ${outcome.recordingUrl ?? null},
        brain_end_reason = ${keptBrainEndReason(outcome.brainEndReason)},
        holds_slot = false, hold_until = null
      from before where s.id = before.id
      returning s.id, s.node_id, s.started_at, s.ended_at, before.holds_slot as released,
        s.workspace_id, s.agent_id, s.direction, s.metadata, s.created_at
    ), hooked as (${enqueueEnded(sql, "done", status, reason, outcome)}), released as (
      update worker_nodes n set active_calls = greatest(n.active_calls - 1, 0)
      from done where n.id = done.node_id and done.released
    ), billed as (
      update usage u set
        call_seconds =
          greatest(coalesce(extract(epoch from done.ended_at - done.started_at), 0), 0),
        recognised_seconds = ${recognised}, synthesized_characters = ${characters},
        by_engine = ${byEngine}
      from done where u.session_id = done.id
    )
    select id, (select count(event_id) from hooked) as hooked from done`;
  return rows.length === 1;
}

/**
 * `created` sessions whose token ran out unused become `expired`; those still holding their slot
 * (a hold as long as the token) give it back. Rows another sweeper is handling are skipped. The
 * end reason is `token_expired`, or `redirect_not_followed` for a session the SIP redirect made
 * (no key, the dialled number in its metadata, no provider named): its 302 was never followed.
 */
export async function expireUnused(sql: Sql): Promise<number> {
  const rows = await sql<{ n: number }[]>`
    with before as (
      select id, holds_slot from sessions
      where status = 'created' and token_expires_at < now()
      for update skip locked
    ), gone as (
      update sessions s set status = 'expired', ended_at = now(), holds_slot = false,
        hold_until = null,
        end_reason = case
          when s.key_id is null and s.metadata ? 'phone_dialled'
            and not s.metadata ? 'phone_carrier' then 'redirect_not_followed'
          else 'token_expired' end
      from before where s.id = before.id
      returning s.node_id, before.holds_slot as released
    ), per_node as (
      select node_id, count(*)::int as n from gone
      where node_id is not null and released group by node_id
    ), released as (
      update worker_nodes w set active_calls = greatest(w.active_calls - per_node.n, 0)
      from per_node where w.id = per_node.node_id
    )
    select count(*)::int as n from gone`;
  return rows[0].n;
}

/**
 * `created` sessions whose pre-offer hold is over give their node slot back; they stay `created`
 * and their token stays valid (the offer then has to find room on the node again). Idempotent:
 * a session gives its slot back once. Returns how many slots went back.
 */
export async function releaseLapsedHolds(sql: Sql): Promise<number> {
  const rows = await sql<{ n: number }[]>`
    with lapsed as (
      update sessions s set holds_slot = false
      where s.id in (
        select id from sessions
        where status = 'created' and holds_slot and hold_until <= now()
        for update skip locked
      ) and s.status = 'created' and s.holds_slot
      returning s.node_id
    ), per_node as (
      select node_id, count(*)::int as n from lapsed where node_id is not null group by node_id
    ), released as (
      update worker_nodes w set active_calls = greatest(w.active_calls - per_node.n, 0)
      from per_node where w.id = per_node.node_id
    )
    select count(*)::int as n from lapsed`;
  return rows[0].n;
}

/** A session's status, end reason and metadata (a phone call's carrier and call id). */
export interface SessionPhoneState {
  status: SessionStatus;
  end_reason: string | null;
  metadata: Record<string, unknown>;
}

export async function sessionPhoneState(
  sql: Sql,
  sessionId: string,
): Promise<SessionPhoneState | undefined> {
  const [row] = await sql<SessionPhoneState[]>`
    select status, end_reason, metadata from sessions where id = ${sessionId}`;
  return row;
}
