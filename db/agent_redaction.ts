// An agent's redaction categories (issue 37): read by the worker when a call starts, set through
// agents.redaction.set. Kept in its own table (0013) so that the agents table stays as it is.
import type { Sql } from "./client.ts";
import { CATEGORIES, type Category } from "../common/redaction.ts";
import { textArray } from "./text_array.ts";

export interface AgentRedaction {
  agent_id: string;
  /** In CATEGORIES order; empty: nothing is redacted. */
  categories: Category[];
  updated_at: Date | null;
}

/** The agent's categories; none (and no updated_at) when it never set any. */
export async function getAgentRedaction(sql: Sql, agentId: string): Promise<AgentRedaction> {
  const [row] = await sql<{ categories: string[]; updated_at: Date }[]>`
    select categories, updated_at from agent_redaction where agent_id = ${agentId}`;
  return {
    agent_id: agentId,
    categories: ordered(row?.categories ?? []),
    updated_at: row?.updated_at ?? null,
  };
}

/** Replaces the agent's categories (an empty list turns redaction off). */
export async function setAgentRedaction(
  sql: Sql,
  agentId: string,
  categories: readonly Category[],
): Promise<AgentRedaction> {
  const list = ordered(categories);
  await sql`insert into agent_redaction (agent_id, categories, updated_at)
    values (${agentId}, ${textArray(sql, list)}, now())
    on conflict (agent_id) do update set categories = excluded.categories, updated_at = now()`;
  return await getAgentRedaction(sql, agentId);
}

function ordered(names: readonly string[]): Category[] {
  return CATEGORIES.filter((c) => names.includes(c));
}
