// numbers.create / list / get / update / delete (the admin group, api/admin/routes.ts): E.164
// numbers → agents, each optionally behind a trunk that says who may send its calls.
import type { Context } from "hono";
import { getAgent } from "../../db/agents.ts";
import {
  createPhoneNumber,
  deletePhoneNumber,
  getPhoneNumber,
  listPhoneNumbers,
  updatePhoneNumber,
} from "../../db/phone_numbers.ts";
import { getTrunk } from "../../db/trunks.ts";
import { optionalBool, optionalString, readObject, requiredString } from "../body.ts";
import { ApiError } from "../../common/http/errors.ts";
import type { ApiDeps } from "../context.ts";
import { agentNotFound } from "./agents.ts";
import { checkNumber, echoOnPhone, optionalTrunkId } from "./phone_input.ts";
import { trunkNotFound } from "./trunks.ts";

export const numberNotFound = () => new ApiError(404, "number_not_found", "No such phone number.");

async function checkRefs(deps: ApiDeps, agentId?: string, trunkId?: string | null) {
  if (agentId !== undefined) {
    const agent = await getAgent(deps.sql, agentId);
    if (!agent) throw agentNotFound();
    if (agent.brain_url === "echo:") throw echoOnPhone();
  }
  if (trunkId && !await getTrunk(deps.sql, trunkId)) throw trunkNotFound();
}

export async function create(c: Context, deps: ApiDeps): Promise<Response> {
  const body = await readObject(c, ["number", "agent_id", "trunk_id", "enabled"]);
  const number = checkNumber(requiredString(body, "number"));
  const agentId = requiredString(body, "agent_id");
  const trunkId = optionalTrunkId(body) ?? null;
  const enabled = optionalBool(body, "enabled") ?? true;
  await checkRefs(deps, agentId, trunkId);
  const made = await createPhoneNumber(deps.sql, {
    number,
    agent_id: agentId,
    trunk_id: trunkId,
    enabled,
  });
  if (!made) {
    throw new ApiError(409, "number_taken", "This number already leads to an agent.", { number });
  }
  return c.json({ phone_number: made });
}

export async function list(c: Context, deps: ApiDeps): Promise<Response> {
  const body = await readObject(c, ["agent_id", "trunk_id"]);
  const numbers = await listPhoneNumbers(deps.sql, {
    agent_id: optionalString(body, "agent_id"),
    trunk_id: optionalString(body, "trunk_id"),
  });
  return c.json({ phone_numbers: numbers });
}

export async function get(c: Context, deps: ApiDeps): Promise<Response> {
  const body = await readObject(c, ["number"]);
  const found = await getPhoneNumber(deps.sql, requiredString(body, "number"));
  if (!found) throw numberNotFound();
  return c.json({ phone_number: found });
}

export async function update(c: Context, deps: ApiDeps): Promise<Response> {
  const body = await readObject(c, ["number", "agent_id", "trunk_id", "enabled"]);
  const number = requiredString(body, "number");
  const agentId = optionalString(body, "agent_id");
  const trunkId = optionalTrunkId(body);
  const enabled = optionalBool(body, "enabled");
  if (!await getPhoneNumber(deps.sql, number)) throw numberNotFound();
  await checkRefs(deps, agentId, trunkId);
  const updated = await updatePhoneNumber(deps.sql, number, {
    agent_id: agentId,
    trunk_id: trunkId,
    enabled,
  });
  if (!updated) throw numberNotFound();
  return c.json({ phone_number: updated });
}

export async function remove(c: Context, deps: ApiDeps): Promise<Response> {
  const body = await readObject(c, ["number"]);
  const number = requiredString(body, "number");
  if (!await deletePhoneNumber(deps.sql, number)) throw numberNotFound();
  return c.json({ deleted: true, number });
}
