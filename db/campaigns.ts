// Outbound campaigns: their rows, contacts, attempts and progress (migration 0008). What the
// scheduler claims and settles is db/campaign_dialing.ts.
import type { Pool, Sql } from "./client.ts";
import { newId } from "../common/ids.ts";
import type { MachineDetection } from "../common/dial.ts";
import { textArray } from "./text_array.ts";

export type CampaignStatus = "scheduled" | "running" | "paused" | "cancelled" | "done";
export type ContactState = "pending" | "dialing" | "done" | "failed" | "cancelled";

export interface CampaignSettings {
  name: string;
  agent_id: string;
  from: string;
  trunk_id: string | null;
  starts_at: Date | null;
  concurrency: number;
  window_start: string;
  window_end: string;
  time_zone: string;
  max_attempts: number;
  retry_backoff_seconds: number;
  retry_on: string[];
  ring_timeout_seconds: number;
  machine_detection: MachineDetection;
}

export interface Campaign extends CampaignSettings {
  campaign_id: string;
  workspace_id: string;
  status: CampaignStatus;
  created_at: Date;
  updated_at: Date;
}

export interface NewContact {
  number: string;
  data: Record<string, unknown>;
  language: string | null;
  /** The campaign's zone when the contact names none. */
  time_zone: string;
}

export interface Progress {
  /** Contacts by state (every state present, 0 when none). */
  contacts: Record<ContactState, number> & { total: number };
  /** Attempts by outcome; `in_progress` counts attempts not settled yet. */
  attempts: Record<string, number>;
}

const COLUMNS = (sql: Sql) =>
  sql`id as campaign_id, workspace_id, agent_id, from_number as "from", trunk_id, name, status,
    starts_at, concurrency, window_start, window_end, time_zone, max_attempts,
    retry_backoff_seconds, retry_on, ring_timeout_seconds, machine_detection, created_at,
    updated_at`;

/** The campaign and all its contacts, in one transaction (contacts keep their request index). */
export async function createCampaign(
  sql: Pool,
  workspaceId: string,
  settings: CampaignSettings,
  contacts: NewContact[],
  now: Date,
): Promise<Campaign> {
  const id = newId("cmp");
  const rows = contacts.map((c, i) => ({ i, ...c }));
  await sql.begin(async (tx) => {
    await tx`insert into campaigns (id, workspace_id, agent_id, from_number, trunk_id, name,
        starts_at, concurrency, window_start, window_end, time_zone, max_attempts,
        retry_backoff_seconds, retry_on, ring_timeout_seconds, machine_detection, created_at,
        updated_at)
      values (${id}, ${workspaceId}, ${settings.agent_id}, ${settings.from}, ${settings.trunk_id},
        ${settings.name}, ${settings.starts_at}, ${settings.concurrency}, ${settings.window_start},
        ${settings.window_end}, ${settings.time_zone}, ${settings.max_attempts},
        ${settings.retry_backoff_seconds}, ${textArray(tx, settings.retry_on)},
        ${settings.ring_timeout_seconds}, ${settings.machine_detection}, ${now}, ${now})`;
    // One statement for every contact: the list arrives as one JSON text.
    await tx`insert into campaign_contacts (campaign_id, contact_index, number, data, language,
        time_zone, next_attempt_at, updated_at)
      select ${id}, x.i, x.number, x.data, x.language, x.time_zone,
        ${settings.starts_at ?? now}, ${now}
      from jsonb_to_recordset(${JSON.stringify(rows)}::text::jsonb)
        as x(i int, number text, data jsonb, language text, time_zone text)`;
  });
  return (await getCampaign(sql, id))!;
}

export async function getCampaign(sql: Sql, campaignId: string): Promise<Campaign | undefined> {
  const [row] = await sql<Campaign[]>`select ${COLUMNS(sql)} from campaigns
    where id = ${campaignId}`;
  return row;
}

export async function listCampaigns(
  sql: Sql,
  filter: { workspace_id?: string; agent_id?: string; status?: string } = {},
): Promise<Campaign[]> {
  return await sql<Campaign[]>`select ${COLUMNS(sql)} from campaigns where true
    ${filter.workspace_id === undefined ? sql`` : sql`and workspace_id = ${filter.workspace_id}`}
    ${filter.agent_id === undefined ? sql`` : sql`and agent_id = ${filter.agent_id}`}
    ${filter.status === undefined ? sql`` : sql`and status = ${filter.status}`}
    order by created_at desc, id desc limit 500`;
}

const CONTACT_STATES: ContactState[] = ["pending", "dialing", "done", "failed", "cancelled"];

/** Progress of each campaign named, by contact state and by attempt outcome. */
export async function campaignProgress(
  sql: Sql,
  campaignIds: string[],
): Promise<Map<string, Progress>> {
  const out = new Map<string, Progress>();
  for (const id of campaignIds) {
    const contacts = Object.fromEntries(CONTACT_STATES.map((s) => [s, 0]));
    out.set(id, { contacts: { ...contacts, total: 0 } as Progress["contacts"], attempts: {} });
  }
  if (!campaignIds.length) return out;
  const ids = textArray(sql, campaignIds);
  const states = await sql<{ campaign_id: string; state: ContactState; n: number }[]>`
    select campaign_id, state, count(*)::int as n from campaign_contacts
    where campaign_id = any(${ids}) group by campaign_id, state`;
  for (const r of states) {
    const p = out.get(r.campaign_id)!;
    p.contacts[r.state] = r.n;
    p.contacts.total += r.n;
  }
  const outcomes = await sql<{ campaign_id: string; outcome: string; n: number }[]>`
    select campaign_id, coalesce(outcome, 'in_progress') as outcome, count(*)::int as n
    from campaign_attempts where campaign_id = any(${ids}) group by 1, 2`;
  for (const r of outcomes) out.get(r.campaign_id)!.attempts[r.outcome] = r.n;
  return out;
}

/**
 * Moves a campaign from one of `from` to `to`; undefined when it is in none of them (or is not
 * there). Cancelling also cancels its pending contacts, in the same transaction; contacts being
 * dialled finish their calls.
 */
export async function changeCampaignStatus(
  sql: Pool,
  campaignId: string,
  from: CampaignStatus[],
  to: CampaignStatus,
  now: Date,
): Promise<Campaign | undefined> {
  return await sql.begin(async (tx) => {
    const [row] = await tx<{ id: string }[]>`update campaigns
      set status = ${to}, updated_at = ${now}
      where id = ${campaignId} and status = any(${textArray(tx, from)})
      returning id`;
    if (!row) return undefined;
    if (to === "cancelled") {
      await tx`update campaign_contacts set state = 'cancelled', updated_at = ${now}
        where campaign_id = ${campaignId} and state = 'pending'`;
    }
    return await getCampaign(tx, campaignId);
  });
}

export interface CampaignContact {
  contact_index: number;
  number: string;
  data: Record<string, unknown>;
  language: string | null;
  time_zone: string;
  state: ContactState;
  attempts: number;
  next_attempt_at: Date;
  last_outcome: string | null;
}

/** One page of a campaign's contacts, in request order, from index `after` + 1. */
export async function listContacts(
  sql: Sql,
  campaignId: string,
  page: { after?: number; limit: number; state?: string },
): Promise<CampaignContact[]> {
  return await sql<CampaignContact[]>`select contact_index, number, data, language, time_zone,
      state, attempts, next_attempt_at, last_outcome
    from campaign_contacts where campaign_id = ${campaignId}
      and contact_index > ${page.after ?? -1}
      ${page.state === undefined ? sql`` : sql`and state = ${page.state}`}
    order by contact_index limit ${page.limit}`;
}

export interface CampaignAttempt {
  contact_index: number;
  attempt: number;
  session_id: string | null;
  outcome: string | null;
  refusal_code: string | null;
  started_at: Date;
  ended_at: Date | null;
}

export async function listAttempts(
  sql: Sql,
  campaignId: string,
  page: {
    contact_index?: number;
    limit: number;
    after?: { contact_index: number; attempt: number };
  },
): Promise<CampaignAttempt[]> {
  const after = page.after ?? { contact_index: -1, attempt: 0 };
  return await sql<CampaignAttempt[]>`select contact_index, attempt, session_id, outcome,
      refusal_code, started_at, ended_at
    from campaign_attempts where campaign_id = ${campaignId}
      ${page.contact_index === undefined ? sql`` : sql`and contact_index = ${page.contact_index}`}
      and (contact_index, attempt) > (${after.contact_index}, ${after.attempt})
    order by contact_index, attempt limit ${page.limit}`;
}

/** True when one of the workspace's agents has the number (phone_numbers): it may call from it. */
export async function workspaceOwnsNumber(
  sql: Sql,
  workspaceId: string,
  number: string,
): Promise<boolean> {
  const rows = await sql`select 1 from phone_numbers p join agents a on a.id = p.agent_id
    where p.number = ${number} and a.workspace_id = ${workspaceId} and a.deleted_at is null`;
  return rows.length > 0;
}
