// agents.create / list / get / update / delete (the admin group, api/admin/routes.ts).
import type { Context } from "hono";
import { checkLevel, SENSITIVITY_FIELDS } from "../connect/sensitivity.ts";
import type { SensitivityLevel } from "../../common/turn_sensitivity.ts";
import { createAgent, deleteAgent, getAgent, listAgents, updateAgent } from "../../db/agents.ts";
import { createKey } from "../../db/keys.ts";
import { optionalBool, optionalString, readObject, requiredString } from "../body.ts";
import { ApiError, invalidRequest } from "../../common/http/errors.ts";
import type { ApiDeps } from "../context.ts";
import { listPhoneNumbers } from "../../db/phone_numbers.ts";
import { echoOnPhone } from "./phone_input.ts";
import { ECHO_CANCELLATION, isEchoCancellation } from "../../common/echo_cancellation.ts";

/** An agent's echo_cancellation when given: 'auto', 'on' or 'off', anything else refused. */
function optionalEchoCancellation(body: Record<string, unknown>) {
  const v = body.echo_cancellation;
  if (v === undefined || v === null) return undefined;
  if (!isEchoCancellation(v)) {
    throw invalidRequest(
      "echo_cancellation",
      `echo_cancellation must be one of ${ECHO_CANCELLATION.join(", ")} ` +
        "(auto: on for phone lines, off for web calls).",
    );
  }
  return v;
}

export const agentNotFound = () => new ApiError(404, "agent_not_found", "No such agent.");

/** A brain URL the worker can dial: ws(s)://, or `echo:` for the diagnostic echo call. */
export function checkBrainUrl(value: string, field = "brain_url"): string {
  if (value === "echo:") return value;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalidRequest(field, `${field} must be a ws:// or wss:// URL (or echo:).`);
  }
  if (url.protocol !== "ws:" && url.protocol !== "wss:") {
    throw invalidRequest(field, `${field} must be a ws:// or wss:// URL (or echo:).`);
  }
  return value;
}

const LEVELS = SENSITIVITY_FIELDS;

/** The agent's turn sensitivity, each checked if given (low, medium, high; else refused). */
function agentLevels(body: Record<string, unknown>) {
  const out: { interruption_sensitivity?: SensitivityLevel; turn_patience?: SensitivityLevel } = {};
  for (const name of LEVELS) {
    const v = body[name];
    if (v !== undefined && v !== null) out[name] = checkLevel(v, name);
  }
  return out;
}

export async function create(c: Context, deps: ApiDeps): Promise<Response> {
  const body = await readObject(c, [
    "tenant",
    "name",
    "brain_url",
    "record_by_default",
    "echo_cancellation",
    ...LEVELS,
  ]);
  const tenant = requiredString(body, "tenant");
  const name = requiredString(body, "name");
  const brainUrl = checkBrainUrl(requiredString(body, "brain_url"));
  const recordByDefault = optionalBool(body, "record_by_default");
  const { agent, session_key } = await createAgentWithKey(deps, {
    tenant,
    name,
    brain_url: brainUrl,
    record_by_default: recordByDefault,
    ...agentLevels(body),
    echo_cancellation: optionalEchoCancellation(body),
  });
  return c.json({ agent, session_key });
}

/**
 * An agent and its first secret key, made together in one transaction: the raw key exists only
 * in what this returns (agents.create and the console show it once).
 */
export function createAgentWithKey(deps: ApiDeps, input: Parameters<typeof createAgent>[1]) {
  return deps.sql.begin(async (tx) => {
    const agent = await createAgent(tx, input);
    const { key, session_key } = await createKey(tx, deps.hashSecret, {
      agent_id: agent.agent_id,
      workspace_id: agent.workspace_id,
      kind: "secret",
    });
    return { agent, key, session_key };
  });
}

export async function list(c: Context, deps: ApiDeps): Promise<Response> {
  const body = await readObject(c, ["tenant"]);
  return c.json({ agents: await listAgents(deps.sql, optionalString(body, "tenant")) });
}

export async function get(c: Context, deps: ApiDeps): Promise<Response> {
  const body = await readObject(c, ["agent_id"]);
  const agent = await getAgent(deps.sql, requiredString(body, "agent_id"));
  if (!agent) throw agentNotFound();
  return c.json({ agent });
}

export async function update(c: Context, deps: ApiDeps): Promise<Response> {
  const body = await readObject(c, [
    "agent_id",
    "name",
    "brain_url",
    "record_by_default",
    ...LEVELS,
    "echo_cancellation",
  ]);
  const brainUrl = optionalString(body, "brain_url");
  const agentId = requiredString(body, "agent_id");
  const echoCancellation = optionalEchoCancellation(body);
  // An agent behind a phone number keeps a brain the worker can dial (numbers.ts echoOnPhone).
  if (brainUrl === "echo:" && (await listPhoneNumbers(deps.sql, { agent_id: agentId })).length) {
    throw echoOnPhone();
  }
  const agent = await updateAgent(deps.sql, agentId, {
    name: optionalString(body, "name"),
    brain_url: brainUrl === undefined ? undefined : checkBrainUrl(brainUrl),
    record_by_default: optionalBool(body, "record_by_default"),
    ...agentLevels(body),
    echo_cancellation: echoCancellation,
  });
  if (!agent) throw agentNotFound();
  deps.keys.invalidate(`agent:${agent.agent_id}`);
  return c.json({ agent });
}

export async function remove(c: Context, deps: ApiDeps): Promise<Response> {
  const body = await readObject(c, ["agent_id"]);
  const agentId = requiredString(body, "agent_id");
  const revoked = await deleteAgent(deps.sql, agentId);
  if (!revoked) throw agentNotFound();
  for (const id of revoked) deps.keys.invalidate(id);
  return c.json({ deleted: true, agent_id: agentId, revoked_key_ids: revoked });
}
