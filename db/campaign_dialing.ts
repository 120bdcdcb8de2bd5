// What a campaign scheduler does to the database (api/campaigns/scheduler.ts): claim due contacts
// inside their calling window, record what each dial came back with, and settle attempts from
// their sessions' ends. Every step is a guarded update, so two schedulers on one database (or one
// restarted halfway) can neither claim one contact attempt twice nor settle it twice.
import { enqueueAttemptDone } from "./webhook_outbox.ts";
import type { Pool, Sql } from "./client.ts";
import type { MachineDetection } from "../common/dial.ts";
import { insideWindow, nextOpening } from "../common/calling_window.ts";

/** A contact attempt this scheduler claimed and must now dial. */
export interface Claim {
  campaign_id: string;
  contact_index: number;
  attempt: number;
  workspace_id: string;
  agent_id: string;
  to: string;
  from: string;
  trunk_id: string | null;
  ring_timeout_seconds: number;
  machine_detection: MachineDetection;
  data: Record<string, unknown>;
  language: string | null;
}

const json = (rows: unknown[]) => JSON.stringify(rows);

/** This scheduler is alive at `now`: its claims in flight are not lost. */
export async function beat(sql: Sql, schedulerId: string, now: Date): Promise<void> {
  await sql`insert into campaign_schedulers (id, seen_at) values (${schedulerId}, ${now})
    on conflict (id) do update set seen_at = greatest(campaign_schedulers.seen_at, excluded.seen_at)`;
}

/**
 * The dial threw: whether a call was placed is unknown, so the claim is handed to no scheduler
 * and the next settle ends it `dial_lost` (as a crashed scheduler's would be), never dialled again.
 */
export async function abandonClaim(sql: Sql, claim: Claim): Promise<void> {
  const { campaign_id, contact_index, attempt } = claim;
  await sql`update campaign_attempts set claimed_by = ''
    where campaign_id = ${campaign_id} and contact_index = ${contact_index}
      and attempt = ${attempt} and outcome is null and session_id is null`;
}

/** A scheduler that stopped cleanly leaves no claim in flight; its row goes. */
export async function forgetScheduler(sql: Sql, schedulerId: string): Promise<void> {
  await sql`delete from campaign_schedulers where id = ${schedulerId}`;
}

/** Scheduled campaigns whose start has come run; returns the campaigns that may dial. */
/**
 * Nothing for a scheduler to do: no campaign scheduled or running, no attempt waiting for its
 * outcome. One read, so an API with no campaigns costs its database one statement a tick.
 */
export async function schedulerIdle(sql: Sql): Promise<boolean> {
  const [row] = await sql<{ idle: boolean }[]>`select
    not exists (select 1 from campaigns where status in ('scheduled', 'running'))
    and not exists (select 1 from campaign_attempts where outcome is null) as idle`;
  return row.idle;
}

export async function runningCampaigns(sql: Sql, now: Date): Promise<string[]> {
  await sql`update campaigns set status = 'running', updated_at = ${now}
    where status = 'scheduled' and (starts_at is null or starts_at <= ${now})`;
  const rows = await sql<{ id: string }[]>`select id from campaigns where status = 'running'
    order by created_at, id`;
  return rows.map((r) => r.id);
}

/**
 * Claims a running campaign's due contacts, up to its free concurrency, in one transaction: the
 * campaign row is locked first (another scheduler holding it is skipped, not waited for), so the
 * count of attempts in progress cannot change under the claim. A due contact outside its window
 * stays pending with next_attempt_at at the window's next opening. A claimed contact is
 * `dialing` and its attempt row exists before this returns, so no dial happens unrecorded.
 */
export async function claimDue(
  sql: Pool,
  campaignId: string,
  schedulerId: string,
  now: Date,
): Promise<Claim[]> {
  return await sql.begin(async (tx) => {
    const [c] = await tx<
      {
        concurrency: number;
        window_start: string;
        window_end: string;
        workspace_id: string;
        agent_id: string;
        from_number: string;
        trunk_id: string | null;
        ring_timeout_seconds: number;
        machine_detection: MachineDetection;
      }[]
    >`select concurrency, window_start, window_end, workspace_id, agent_id, from_number, trunk_id,
        ring_timeout_seconds, machine_detection
      from campaigns where id = ${campaignId} and status = 'running' for update skip locked`;
    if (!c) return [];
    const [{ n }] = await tx<{ n: number }[]>`select count(*)::int as n from campaign_attempts
      where campaign_id = ${campaignId} and outcome is null`;
    let free = c.concurrency - n;
    const window = { start: c.window_start, end: c.window_end };
    const claims: Claim[] = [];
    while (free > 0) {
      const due = await tx<
        {
          contact_index: number;
          number: string;
          data: Record<string, unknown>;
          language: string | null;
          time_zone: string;
        }[]
      >`select contact_index, number, data, language, time_zone from campaign_contacts
        where campaign_id = ${campaignId} and state = 'pending' and next_attempt_at <= ${now}
        order by next_attempt_at, contact_index limit ${free} for update skip locked`;
      if (!due.length) break;
      const later = due.filter((d) => !insideWindow(now, d.time_zone, window));
      const dial = due.filter((d) => insideWindow(now, d.time_zone, window));
      if (later.length) {
        const opens = later.map((d) => ({
          i: d.contact_index,
          at: nextOpening(now, d.time_zone, window).toISOString(),
        }));
        await tx`update campaign_contacts ct set next_attempt_at = x.at, updated_at = ${now}
          from jsonb_to_recordset(${json(opens)}::text::jsonb) as x(i int, at timestamptz)
          where ct.campaign_id = ${campaignId} and ct.contact_index = x.i`;
      }
      if (dial.length) {
        const indexes = dial.map((d) => ({ i: d.contact_index }));
        const marked = await tx<{ contact_index: number; attempts: number }[]>`
          update campaign_contacts ct set state = 'dialing', attempts = ct.attempts + 1,
            updated_at = ${now}
          from jsonb_to_recordset(${json(indexes)}::text::jsonb) as x(i int)
          where ct.campaign_id = ${campaignId} and ct.contact_index = x.i and ct.state = 'pending'
          returning ct.contact_index, ct.attempts`;
        const attempts = marked.map((m) => ({ i: m.contact_index, a: m.attempts }));
        // The primary key (contact, attempt number) refuses a second claim of one attempt.
        await tx`insert into campaign_attempts (campaign_id, contact_index, attempt, claimed_by,
            started_at)
          select ${campaignId}, x.i, x.a, ${schedulerId}, ${now}
          from jsonb_to_recordset(${json(attempts)}::text::jsonb) as x(i int, a int)`;
        const byIndex = new Map(dial.map((d) => [d.contact_index, d]));
        for (const m of marked) {
          const d = byIndex.get(m.contact_index)!;
          claims.push({
            campaign_id: campaignId,
            contact_index: m.contact_index,
            attempt: m.attempts,
            workspace_id: c.workspace_id,
            agent_id: c.agent_id,
            to: d.number,
            from: c.from_number,
            trunk_id: c.trunk_id,
            ring_timeout_seconds: c.ring_timeout_seconds,
            machine_detection: c.machine_detection,
            data: d.data,
            language: d.language,
          });
        }
      }
      free -= dial.length;
    }
    return claims;
  });
}

/**
 * The dial placed a call: the attempt now follows its session. False when the attempt was
 * settled meanwhile (recovery took this scheduler for gone): the call runs unfollowed.
 */
export async function recordDialled(sql: Sql, claim: Claim, sessionId: string): Promise<boolean> {
  const { campaign_id, contact_index, attempt } = claim;
  const rows = await sql`update campaign_attempts set session_id = ${sessionId}
    where campaign_id = ${campaign_id} and contact_index = ${contact_index}
      and attempt = ${attempt} and outcome is null and session_id is null
    returning attempt`;
  return rows.length === 1;
}

/** The dial was refused (nothing placed): the attempt ends `refused`, the contact `failed`. */
export async function recordRefused(
  sql: Pool,
  claim: Claim,
  code: string,
  now: Date,
): Promise<boolean> {
  const { campaign_id, contact_index, attempt } = claim;
  return await sql.begin(async (tx) => {
    const rows = await tx`update campaign_attempts
      set outcome = 'refused', refusal_code = ${code}, ended_at = ${now}
      where campaign_id = ${campaign_id} and contact_index = ${contact_index}
        and attempt = ${attempt} and outcome is null and session_id is null
      returning attempt`;
    if (rows.length !== 1) return false;
    await tx`update campaign_contacts set state = 'failed', last_outcome = 'refused',
        updated_at = ${now}
      where campaign_id = ${campaign_id} and contact_index = ${contact_index}
        and state = 'dialing' and attempts = ${attempt}`;
    return true;
  });
}

/**
 * Settles attempts whose session has ended, and claims whose scheduler is gone (not seen for
 * `staleSeconds`) before their dial returned a session: those end `dial_lost` and are never
 * dialled again as that attempt. A settled contact is retried after the campaign's backoff when
 * the outcome is one it retries and attempts remain (pending again, or cancelled if the campaign
 * was), else it is `done` (its call ended `ended`) or `failed`. Returns how many were settled.
 */
export async function settleAttempts(
  sql: Sql,
  schedulerId: string,
  now: Date,
  staleSeconds: number,
): Promise<number> {
  const stale = new Date(now.getTime() - staleSeconds * 1000);
  // Rows locked by another scheduler settling them are skipped: it settles them.
  const rows = await sql<{ n: number }[]>`
    with ended as (
      select a.campaign_id, a.contact_index, a.attempt,
        case
          when s.status = 'ended' and s.end_reason in ('no_answer', 'busy', 'rejected', 'machine')
            then s.end_reason
          when s.status = 'ended' then 'answered'
          when s.status = 'failed' and s.end_reason = 'dial_failed' then 'dial_failed'
          when s.status = 'failed' then 'failed'
          else 'expired'
        end as outcome,
        case when s.status = 'ended' then 'done' else 'failed' end as final_state
      from campaign_attempts a join sessions s on s.id = a.session_id
      where a.outcome is null and s.status in ('ended', 'failed', 'expired')
      for update of a skip locked
    ), lost as (
      select a.campaign_id, a.contact_index, a.attempt, 'dial_lost' as outcome,
        'failed' as final_state
      from campaign_attempts a
      where a.outcome is null and a.session_id is null and a.claimed_by <> ${schedulerId}
        and not exists (select 1 from campaign_schedulers cs
          where cs.id = a.claimed_by and cs.seen_at > ${stale})
      for update of a skip locked
    ), settled as (
      update campaign_attempts a set outcome = x.outcome, ended_at = ${now}
      from (select * from ended union all select * from lost) x
      where a.campaign_id = x.campaign_id and a.contact_index = x.contact_index
        and a.attempt = x.attempt
      returning a.campaign_id, a.contact_index, a.attempt, x.outcome, x.final_state, a.session_id
    ), next as (
      select st.*, c.status as campaign_status, c.retry_backoff_seconds, c.workspace_id, c.agent_id,
        (st.outcome = any(c.retry_on) and st.attempt < c.max_attempts) as retry
      from settled st join campaigns c on c.id = st.campaign_id
    ), contacts as (
      update campaign_contacts ct set
        state = case
          when n.retry and n.campaign_status = 'cancelled' then 'cancelled'
          when n.retry then 'pending'
          else n.final_state end,
        next_attempt_at = case when n.retry
          then ${now}::timestamptz + make_interval(secs => n.retry_backoff_seconds)
          else ct.next_attempt_at end,
        last_outcome = n.outcome,
        updated_at = ${now}
      from next n
      where ct.campaign_id = n.campaign_id and ct.contact_index = n.contact_index
        and ct.state = 'dialing' and ct.attempts = n.attempt
      returning 1
    ), hooked as (${enqueueAttemptDone(sql, "next")})
    select (select count(*)::int from settled) as n, (select count(event_id) from hooked) as h`;
  return rows[0].n;
}

/** Running campaigns with no contact pending or being dialled are done. */
export async function finishCampaigns(sql: Sql, now: Date): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`update campaigns c set status = 'done',
      updated_at = ${now}
    where c.status = 'running' and not exists (select 1 from campaign_contacts ct
      where ct.campaign_id = c.id and ct.state in ('pending', 'dialing'))
    returning c.id`;
  return rows.map((r) => r.id);
}
