// keys.create / list / revoke (the admin group, api/admin/routes.ts).
import type { Context } from "hono";
import { getAgent } from "../../db/agents.ts";
import { createKey, listKeys, revokeKey } from "../../db/keys.ts";
import { allowlistOrigin } from "../auth/origin.ts";
import { optionalStringArray, readObject, requiredString } from "../body.ts";
import { ApiError, invalidRequest } from "../../common/http/errors.ts";
import type { ApiDeps } from "../context.ts";
import { agentNotFound } from "./agents.ts";

export async function create(c: Context, deps: ApiDeps): Promise<Response> {
  const body = await readObject(c, ["agent_id", "kind", "allowed_origins"]);
  const kind = requiredString(body, "kind");
  if (kind !== "secret" && kind !== "publishable") {
    throw invalidRequest("kind", 'kind must be "secret" or "publishable".');
  }
  const origins = optionalStringArray(body, "allowed_origins") ?? [];
  if (kind === "secret" && origins.length) {
    throw invalidRequest("allowed_origins", "Only publishable keys have allowed origins.");
  }
  const normalized = origins.map((o, i) => {
    const n = allowlistOrigin(o);
    if (!n) {
      throw invalidRequest(
        `allowed_origins.${i}`,
        `${JSON.stringify(o)} is not an origin (scheme://host[:port], no path).`,
      );
    }
    return n;
  });
  const agent = await getAgent(deps.sql, requiredString(body, "agent_id"));
  if (!agent) throw agentNotFound();
  const created = await createKey(deps.sql, deps.hashSecret, {
    agent_id: agent.agent_id,
    workspace_id: agent.workspace_id,
    kind,
    allowed_origins: normalized,
  });
  return c.json(created);
}

export async function list(c: Context, deps: ApiDeps): Promise<Response> {
  const body = await readObject(c, ["agent_id"]);
  const agentId = requiredString(body, "agent_id");
  if (!await getAgent(deps.sql, agentId)) throw agentNotFound();
  return c.json({ keys: await listKeys(deps.sql, agentId) });
}

export async function revoke(c: Context, deps: ApiDeps): Promise<Response> {
  const body = await readObject(c, ["key_id"]);
  const key = await revokeKey(deps.sql, requiredString(body, "key_id"));
  if (!key) throw new ApiError(404, "key_not_found", "No such key.");
  deps.keys.invalidate(key.key_id); // this process at once; the others through NOTIFY
  return c.json({ key });
}
