// Phone numbers: an E.164 number leads to an agent, optionally through a trunk that says who may
// send its calls (db/trunks.ts). Looked up by the SIP redirect server for every INVITE, and by the
// provider WebSocket adapters (findPhoneNumber) for every call they bridge.
import type { Sql } from "./client.ts";
import type { SensitivityLevel } from "../common/turn_sensitivity.ts";
import type { TrunkCheck } from "./trunks.ts";

export interface PhoneNumber {
  number: string;
  agent_id: string;
  trunk_id: string | null;
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
}

/** Where a call to a number goes: the number's agent, its workspace, the trunk that guards it. */
export interface PhoneNumberRoute {
  number: string;
  agent_id: string;
  workspace_id: string;
  trunk_id: string | null;
  /** The agent's recording default, which the session takes (no caller can ask otherwise). */
  record_by_default: boolean;
  /** The agent's turn sensitivity (common/turn_sensitivity.ts), which the session takes. */
  interruption_sensitivity: SensitivityLevel;
  turn_patience: SensitivityLevel;
}

/** E.164 (ITU-T E.164, as RFC 3966 global numbers write it): `+`, then 8 to 15 digits. */
export const E164 = /^\+[0-9]{8,15}$/;

const COLUMNS = (sql: Sql) => sql`number, agent_id, trunk_id, enabled, created_at, updated_at`;

export async function createPhoneNumber(
  sql: Sql,
  input: { number: string; agent_id: string; trunk_id: string | null; enabled: boolean },
): Promise<PhoneNumber | undefined> {
  // on conflict do nothing: a number taken already is "undefined", not a driver error.
  const [row] = await sql<PhoneNumber[]>`
    insert into phone_numbers (number, agent_id, trunk_id, enabled)
    values (${input.number}, ${input.agent_id}, ${input.trunk_id}, ${input.enabled})
    on conflict (number) do nothing
    returning ${COLUMNS(sql)}`;
  return row;
}

export async function getPhoneNumber(sql: Sql, number: string): Promise<PhoneNumber | undefined> {
  const [row] = await sql<PhoneNumber[]>`select ${COLUMNS(sql)} from phone_numbers
    where number = ${number}`;
  return row;
}

export async function listPhoneNumbers(
  sql: Sql,
  filter: { agent_id?: string; trunk_id?: string } = {},
): Promise<PhoneNumber[]> {
  return await sql<PhoneNumber[]>`select ${COLUMNS(sql)} from phone_numbers
    where true
      ${filter.agent_id === undefined ? sql`` : sql`and agent_id = ${filter.agent_id}`}
      ${filter.trunk_id === undefined ? sql`` : sql`and trunk_id = ${filter.trunk_id}`}
    order by number`;
}

/** `trunk_id`: undefined keeps it, null takes the number off its trunk. */
export async function updatePhoneNumber(
  sql: Sql,
  number: string,
  changes: { agent_id?: string; trunk_id?: string | null; enabled?: boolean },
): Promise<PhoneNumber | undefined> {
  const keepTrunk = changes.trunk_id === undefined;
  const [row] = await sql<PhoneNumber[]>`
    update phone_numbers set
      agent_id = coalesce(${changes.agent_id ?? null}, agent_id),
      trunk_id = case when ${keepTrunk}::boolean then trunk_id else ${changes.trunk_id ?? null} end,
      enabled = coalesce(${changes.enabled ?? null}::boolean, enabled),
      updated_at = now()
    where number = ${number}
    returning ${COLUMNS(sql)}`;
  return row;
}

export async function deletePhoneNumber(sql: Sql, number: string): Promise<boolean> {
  const rows = await sql`delete from phone_numbers where number = ${number} returning number`;
  return rows.length === 1;
}

/**
 * The route of a call to `number` (E.164, as dialled): undefined when the number is unknown,
 * disabled, or its agent was deleted. What any way in (SIP, a provider's WebSocket stream) asks
 * before it starts a call.
 */
export async function findPhoneNumber(
  sql: Sql,
  number: string,
): Promise<PhoneNumberRoute | undefined> {
  return (await phoneRoute(sql, number))?.route;
}

/** findPhoneNumber and the number's trunk checks in one round trip (the SIP redirect server). */
export async function phoneRoute(
  sql: Sql,
  number: string,
): Promise<{ route: PhoneNumberRoute; trunk: TrunkCheck | null } | undefined> {
  if (!E164.test(number)) return undefined;
  const [row] = await sql<
    (PhoneNumberRoute & {
      allowed_sources: string[] | null;
      auth_username: string | null;
      auth_realm: string | null;
      auth_ha1_md5: string | null;
      auth_ha1_sha256: string | null;
    })[]
  >`select p.number, p.agent_id, a.workspace_id, p.trunk_id, a.record_by_default,
      a.interruption_sensitivity, a.turn_patience, t.allowed_sources, t.auth_username,
      t.auth_realm, t.auth_ha1_md5, t.auth_ha1_sha256
    from phone_numbers p join agents a on a.id = p.agent_id
      left join trunks t on t.id = p.trunk_id
    where p.number = ${number} and p.enabled and a.deleted_at is null`;
  if (!row) return undefined;
  const route = {
    number: row.number,
    agent_id: row.agent_id,
    workspace_id: row.workspace_id,
    trunk_id: row.trunk_id,
    record_by_default: row.record_by_default,
    interruption_sensitivity: row.interruption_sensitivity,
    turn_patience: row.turn_patience,
  };
  if (row.trunk_id === null) return { route, trunk: null };
  return {
    route,
    trunk: {
      trunk_id: row.trunk_id,
      allowed_sources: row.allowed_sources ?? [],
      auth: row.auth_username
        ? {
          username: row.auth_username,
          realm: row.auth_realm!,
          ha1_md5: row.auth_ha1_md5!,
          ha1_sha256: row.auth_ha1_sha256!,
        }
        : null,
    },
  };
}

/** A number as a call placed from it sees it: whose it is and the trunk it is on. */
export interface NumberOwner {
  number: string;
  workspace_id: string;
  trunk_id: string | null;
}

/** The owner of `number` (through its agent, not deleted); undefined when nobody owns it. */
export async function numberOwner(sql: Sql, number: string): Promise<NumberOwner | undefined> {
  const [row] = await sql<NumberOwner[]>`
    select p.number, a.workspace_id, p.trunk_id
    from phone_numbers p join agents a on a.id = p.agent_id
    where p.number = ${number} and a.deleted_at is null`;
  return row;
}

/** Whether one of the workspace's numbers is on the trunk (so the workspace may call over it). */
export async function workspaceUsesTrunk(
  sql: Sql,
  workspaceId: string,
  trunkId: string,
): Promise<boolean> {
  const [row] = await sql<{ yes: boolean }[]>`select exists (
      select 1 from phone_numbers p join agents a on a.id = p.agent_id
      where p.trunk_id = ${trunkId} and a.workspace_id = ${workspaceId}
        and a.deleted_at is null) as yes`;
  return row.yes;
}
