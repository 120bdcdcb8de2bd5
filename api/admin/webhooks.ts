// webhooks.create / list / get / update / delete / deliveries / attempts / redeliver (the admin
// group, api/admin/routes.ts). An endpoint's signing secret is in create's reply only; it is kept
// sealed under TRUNK_CREDENTIALS_KEY (common/sealed.ts, the endpoint's id as additional data).
import type { Context } from "hono";
import { getAgent } from "../../db/agents.ts";
import {
  createEndpoint,
  deleteEndpoint,
  getEndpoint,
  listAttempts,
  listDeliveries,
  listEndpoints,
  redeliver as redeliverRow,
  updateEndpoint,
  workspaceIdByName,
} from "../../db/webhooks.ts";
import { newId } from "../../common/ids.ts";
import { seal, TRUNK_CREDENTIALS_KEY } from "../../common/sealed.ts";
import { newWebhookSecret } from "../../common/webhooks/signature.ts";
import { endpointUrlProblem } from "../../common/webhooks/endpoint_url.ts";
import { WEBHOOK_EVENT_TYPES } from "../../common/webhooks/events.ts";
import { optionalBool, optionalString, optionalStringArray, readObject } from "../body.ts";
import { requiredString } from "../body.ts";
import { ApiError, invalidRequest } from "../../common/http/errors.ts";
import type { ApiDeps } from "../context.ts";
import { agentNotFound } from "./agents.ts";

const notFound = () => new ApiError(404, "webhook_not_found", "No such webhook endpoint.");

function readUrl(body: Record<string, unknown>, required: boolean): string | undefined {
  const url = required ? requiredString(body, "url") : optionalString(body, "url");
  if (url === undefined) return undefined;
  const problem = endpointUrlProblem(url);
  if (problem) throw invalidRequest("url", problem);
  return url;
}

function readEventTypes(body: Record<string, unknown>): string[] | undefined {
  const types = optionalStringArray(body, "event_types");
  types?.forEach((t, i) => {
    if (!(WEBHOOK_EVENT_TYPES as readonly string[]).includes(t)) {
      throw invalidRequest(
        `event_types.${i}`,
        `${JSON.stringify(t)} is not an event type (${WEBHOOK_EVENT_TYPES.join(", ")}).`,
      );
    }
  });
  return types && [...new Set(types)];
}

export interface EndpointInput {
  agent_id?: string;
  tenant?: string;
  url: string;
  description?: string;
  event_types?: string[];
}

/** An endpoint and its secret (shown once); refusals are ApiErrors (the console shows them). */
export async function makeEndpoint(deps: ApiDeps, input: EndpointInput) {
  const problem = endpointUrlProblem(input.url);
  if (problem) throw invalidRequest("url", problem);
  const eventTypes = readEventTypes({ event_types: input.event_types }) ?? [];
  const { agent_id: agentId, tenant } = input;
  if ((agentId === undefined) === (tenant === undefined)) {
    throw invalidRequest(
      "agent_id",
      "Give agent_id (this agent's calls) or tenant (every agent of the workspace), not both.",
    );
  }
  let workspaceId: string | undefined;
  if (agentId !== undefined) {
    const agent = await getAgent(deps.sql, agentId);
    if (!agent) throw agentNotFound();
    workspaceId = agent.workspace_id;
  } else {
    workspaceId = await workspaceIdByName(deps.sql, tenant!);
    if (!workspaceId) throw new ApiError(404, "tenant_not_found", "No such tenant.");
  }
  if (!deps.trunkKey) {
    throw new ApiError(
      500,
      "credentials_key_missing",
      `Webhook endpoints cannot be stored: ${TRUNK_CREDENTIALS_KEY} is not set on the API ` +
        "(base64 of 32 random bytes; each endpoint's signing secret is kept sealed under it).",
      { variable: TRUNK_CREDENTIALS_KEY },
    );
  }
  const endpointId = newId("whk");
  const secret = newWebhookSecret();
  const endpoint = await createEndpoint(deps.sql, {
    endpoint_id: endpointId,
    workspace_id: workspaceId,
    agent_id: agentId ?? null,
    url: input.url,
    description: input.description ?? "",
    event_types: eventTypes,
    secret_sealed: await seal(deps.trunkKey, secret, endpointId),
  });
  return { endpoint, secret };
}

export async function create(c: Context, deps: ApiDeps): Promise<Response> {
  const body = await readObject(c, ["agent_id", "tenant", "url", "description", "event_types"]);
  return c.json(
    await makeEndpoint(deps, {
      url: requiredString(body, "url"),
      agent_id: optionalString(body, "agent_id"),
      tenant: optionalString(body, "tenant"),
      description: optionalString(body, "description"),
      event_types: optionalStringArray(body, "event_types"),
    }),
  );
}

export async function list(c: Context, deps: ApiDeps): Promise<Response> {
  const body = await readObject(c, ["agent_id", "tenant"]);
  const agentId = optionalString(body, "agent_id");
  const tenant = optionalString(body, "tenant");
  const workspaceId = tenant === undefined ? undefined : await workspaceIdByName(deps.sql, tenant);
  if (tenant !== undefined && !workspaceId) {
    throw new ApiError(404, "tenant_not_found", "No such tenant.");
  }
  return c.json({
    endpoints: await listEndpoints(deps.sql, { agent_id: agentId, workspace_id: workspaceId }),
  });
}

export async function get(c: Context, deps: ApiDeps): Promise<Response> {
  const body = await readObject(c, ["endpoint_id"]);
  const endpoint = await getEndpoint(deps.sql, requiredString(body, "endpoint_id"));
  if (!endpoint) throw notFound();
  return c.json({ endpoint });
}

export async function update(c: Context, deps: ApiDeps): Promise<Response> {
  const body = await readObject(c, ["endpoint_id", "url", "description", "event_types", "enabled"]);
  const endpoint = await updateEndpoint(deps.sql, requiredString(body, "endpoint_id"), {
    url: readUrl(body, false),
    description: optionalString(body, "description"),
    event_types: readEventTypes(body),
    enabled: optionalBool(body, "enabled"),
  });
  if (!endpoint) throw notFound();
  return c.json({ endpoint });
}

export async function remove(c: Context, deps: ApiDeps): Promise<Response> {
  const body = await readObject(c, ["endpoint_id"]);
  if (!await deleteEndpoint(deps.sql, requiredString(body, "endpoint_id"))) throw notFound();
  return c.json({ deleted: true });
}

/** The delivery log of an endpoint, newest first: each event, its status and attempts. */
export async function deliveries(c: Context, deps: ApiDeps): Promise<Response> {
  const body = await readObject(c, ["endpoint_id", "session_id", "status", "limit"]);
  const endpointId = requiredString(body, "endpoint_id");
  if (!await getEndpoint(deps.sql, endpointId)) throw notFound();
  const status = optionalString(body, "status");
  if (status !== undefined && !["pending", "delivered", "failed"].includes(status)) {
    throw invalidRequest("status", 'status must be "pending", "delivered" or "failed".');
  }
  const limit = body.limit ?? 50;
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > 500) {
    throw invalidRequest("limit", "limit must be an integer from 1 to 500.");
  }
  return c.json({
    deliveries: await listDeliveries(deps.sql, {
      endpoint_id: endpointId,
      session_id: optionalString(body, "session_id"),
      status,
      limit,
    }),
  });
}

/** Every request made for one delivery: when, the reply's code, how long, or why it failed. */
export async function attempts(c: Context, deps: ApiDeps): Promise<Response> {
  const body = await readObject(c, ["delivery_id"]);
  const id = requiredString(body, "delivery_id");
  const [delivery] = /^[0-9]{1,18}$/.test(id)
    ? await listDeliveries(deps.sql, { delivery_id: id, limit: 1 })
    : [];
  if (!delivery) throw new ApiError(404, "delivery_not_found", "No such delivery.");
  return c.json({ delivery, attempts: await listAttempts(deps.sql, id) });
}

export async function redeliver(c: Context, deps: ApiDeps): Promise<Response> {
  const body = await readObject(c, ["delivery_id"]);
  const delivery = await redeliverRow(deps.sql, requiredString(body, "delivery_id"));
  if (!delivery) {
    throw new ApiError(
      404,
      "delivery_not_found",
      "No such delivery, or its endpoint was deleted.",
    );
  }
  return c.json({ delivery });
}
