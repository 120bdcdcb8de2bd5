// Workspaces and agents.
import type { Pool, Sql } from "./client.ts";
import { newId } from "../common/ids.ts";
import { notifyKeysChanged } from "./keys.ts";
import { DEFAULT_SENSITIVITY, type SensitivityLevel } from "../common/turn_sensitivity.ts";
import type { EchoCancellation } from "../common/echo_cancellation.ts";

export interface Agent {
  agent_id: string;
  tenant: string;
  workspace_id: string;
  name: string;
  brain_url: string;
  record_by_default: boolean;
  /** common/turn_sensitivity.ts: low, medium or high. */
  interruption_sensitivity: SensitivityLevel;
  turn_patience: SensitivityLevel;
  /** 'auto' (phone lines on, web calls off), 'on' or 'off' (migration 0009, docs/echo.md). */
  echo_cancellation: EchoCancellation;
  created_at: Date;
  updated_at: Date;
}

const AGENT_COLUMNS = (sql: Sql) =>
  sql`a.id as agent_id, w.name as tenant, a.workspace_id, a.name, a.brain_url,
      a.record_by_default, a.interruption_sensitivity, a.turn_patience, a.echo_cancellation,
      a.created_at, a.updated_at`;

/** The workspace named `tenant`, created on first use. */
export async function workspaceByName(sql: Sql, tenant: string): Promise<string> {
  const [row] = await sql<{ id: string }[]>`
    insert into workspaces (id, name) values (${newId("ws")}, ${tenant})
    on conflict (name) do update set name = excluded.name
    returning id`;
  return row.id;
}

export async function createAgent(
  sql: Sql,
  input: {
    tenant: string;
    name: string;
    brain_url: string;
    record_by_default?: boolean;
    interruption_sensitivity?: SensitivityLevel;
    turn_patience?: SensitivityLevel;
    echo_cancellation?: EchoCancellation;
  },
): Promise<Agent> {
  const workspaceId = await workspaceByName(sql, input.tenant);
  const id = newId("ag");
  await sql`insert into agents (id, workspace_id, name, brain_url, record_by_default,
      interruption_sensitivity, turn_patience, echo_cancellation)
    values (${id}, ${workspaceId}, ${input.name}, ${input.brain_url},
            ${input.record_by_default ?? false},
            ${input.interruption_sensitivity ?? DEFAULT_SENSITIVITY},
            ${input.turn_patience ?? DEFAULT_SENSITIVITY}, ${input.echo_cancellation ?? "auto"})`;
  return (await getAgent(sql, id))!;
}

export async function getAgent(sql: Sql, agentId: string): Promise<Agent | undefined> {
  const [row] = await sql<Agent[]>`
    select ${AGENT_COLUMNS(sql)} from agents a join workspaces w on w.id = a.workspace_id
    where a.id = ${agentId} and a.deleted_at is null`;
  return row;
}

export async function listAgents(sql: Sql, tenant?: string): Promise<Agent[]> {
  return await sql<Agent[]>`
    select ${AGENT_COLUMNS(sql)} from agents a join workspaces w on w.id = a.workspace_id
    where a.deleted_at is null ${tenant === undefined ? sql`` : sql`and w.name = ${tenant}`}
    order by a.created_at, a.id`;
}

export async function updateAgent(
  sql: Sql,
  agentId: string,
  changes: {
    name?: string;
    brain_url?: string;
    record_by_default?: boolean;
    interruption_sensitivity?: SensitivityLevel;
    turn_patience?: SensitivityLevel;
    echo_cancellation?: EchoCancellation;
  },
): Promise<Agent | undefined> {
  const [row] = await sql<{ id: string }[]>`
    update agents set
      name = coalesce(${changes.name ?? null}, name),
      brain_url = coalesce(${changes.brain_url ?? null}, brain_url),
      record_by_default = coalesce(${
    changes.record_by_default ?? null
  }::boolean, record_by_default),
      interruption_sensitivity = coalesce(${
    changes.interruption_sensitivity ?? null
  }, interruption_sensitivity),
      turn_patience = coalesce(${changes.turn_patience ?? null}, turn_patience),
      echo_cancellation = coalesce(${changes.echo_cancellation ?? null}, echo_cancellation),
      updated_at = now()
    where id = ${agentId} and deleted_at is null
    returning id`;
  if (!row) return undefined;
  // Cached key grants carry record_by_default: drop them everywhere.
  await notifyKeysChanged(sql, `agent:${agentId}`);
  return await getAgent(sql, agentId);
}

/** Soft-deletes the agent and revokes its keys in one transaction; returns the revoked key ids. */
export async function deleteAgent(sql: Pool, agentId: string): Promise<string[] | undefined> {
  return await sql.begin(async (tx) => {
    const [row] = await tx`update agents set deleted_at = now(), updated_at = now()
      where id = ${agentId} and deleted_at is null returning id`;
    if (!row) return undefined;
    const keys = await tx<{ id: string }[]>`update api_keys set revoked_at = now()
      where agent_id = ${agentId} and revoked_at is null returning id`;
    return keys.map((k) => k.id);
  }).then(async (revoked) => {
    if (revoked) await notifyKeysChanged(sql, `agent:${agentId}`);
    return revoked;
  });
}
