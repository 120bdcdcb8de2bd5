// agents.redaction.get / agents.redaction.set (issue 37): which categories of what a customer
// must not keep the worker redacts from an agent's calls (docs/redaction.md). Set replaces the
// whole list; an empty list turns redaction off. Applies to calls that start after it.
import type { Context } from "hono";
import { getAgent } from "../../db/agents.ts";
import { getAgentRedaction, setAgentRedaction } from "../../db/agent_redaction.ts";
import { readObject, requiredString } from "../body.ts";
import { invalidRequest } from "../../common/http/errors.ts";
import { CATEGORIES, type Category } from "../../common/redaction.ts";
import type { ApiDeps } from "../context.ts";
import { agentNotFound } from "./agents.ts";

export async function get(c: Context, deps: ApiDeps): Promise<Response> {
  const body = await readObject(c, ["agent_id"]);
  const agentId = requiredString(body, "agent_id");
  if (!await getAgent(deps.sql, agentId)) throw agentNotFound();
  return c.json({ redaction: await getAgentRedaction(deps.sql, agentId) });
}

export async function set(c: Context, deps: ApiDeps): Promise<Response> {
  const body = await readObject(c, ["agent_id", "categories"]);
  const agentId = requiredString(body, "agent_id");
  const categories = categoriesOf(body.categories);
  if (!await getAgent(deps.sql, agentId)) throw agentNotFound();
  return c.json({ redaction: await setAgentRedaction(deps.sql, agentId, categories) });
}

/** The list as given, checked: every name known, none twice. */
export function categoriesOf(value: unknown): Category[] {
  const known = `one of ${CATEGORIES.join(", ")}`;
  if (!Array.isArray(value)) {
    throw invalidRequest("categories", `categories is required: an array, each ${known}.`);
  }
  const seen = new Set<string>();
  for (const v of value) {
    if (typeof v !== "string" || !(CATEGORIES as readonly string[]).includes(v)) {
      throw invalidRequest(
        "categories",
        `${JSON.stringify(v)} is not a category: each is ${known}.`,
      );
    }
    if (seen.has(v)) throw invalidRequest("categories", `${v} is named twice.`);
    seen.add(v);
  }
  return [...seen] as Category[];
}
