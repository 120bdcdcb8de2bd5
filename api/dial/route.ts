// POST /api/v1/calls.dial: the service calls a phone number and the agent talks (issue 34).
// Check order: credential (401; a publishable key 403) → rate per key and per source address
// (429) → body (413/400) → agent (404) → from, trunk and its credentials (400/404/500) → node
// (503) → the worker (502/503). Nothing is written before the node is reserved; after that, a
// worker that refuses or does not answer leaves the session `failed` with the reason.
import type { Context } from "hono";
import { kindOfRawKey } from "../../common/key_hash.ts";
import { ApiError } from "../../common/http/errors.ts";
import { getAgent } from "../../db/agents.ts";
import { bearer, isAdminToken } from "../auth/credentials.ts";
import { apiKey } from "../auth/credentials.ts";
import { requestAddress } from "../auth/client_address.ts";
import { readJson } from "../body.ts";
import type { ApiDeps } from "../context.ts";
import { agentNotFound, type DialCaller, dialNumber } from "./dial.ts";
import { parseDialBody } from "./parse.ts";

function checkRate(deps: ApiDeps, bucket: string, limit: string, message: string) {
  const wait = deps.limiter.take(bucket);
  if (wait > 0) {
    throw new ApiError(
      429,
      "rate_limited",
      message,
      { retry_after_seconds: wait, limit },
      { "Retry-After": String(wait) },
    );
  }
}

/** The admin token, or a secret key; a publishable key is refused, saying why. */
async function dialer(
  c: Context,
  deps: ApiDeps,
): Promise<{ kind: "admin" } | { kind: "key"; key_id: string; workspace_id: string }> {
  const raw = bearer(c);
  if (isAdminToken(raw, deps.adminToken)) return { kind: "admin" };
  if (!kindOfRawKey(raw)) throw new ApiError(401, "invalid_api_key", "The API key is not valid.");
  const grant = await apiKey(c, deps);
  if (grant.kind !== "secret") {
    throw new ApiError(
      403,
      "publishable_key_cannot_dial",
      "A publishable key cannot place calls: it is public (every page that uses it shows it), " +
        "and a call rings a stranger's phone at the workspace's cost. Dial from your server " +
        "with a secret key.",
    );
  }
  return { kind: "key", key_id: grant.key_id, workspace_id: grant.workspace_id };
}

export async function dial(c: Context, deps: ApiDeps): Promise<Response> {
  const who = await dialer(c, deps);
  if (who.kind === "key") {
    checkRate(
      deps,
      `dial:${who.key_id}`,
      "key_rate",
      "Too many calls placed with this key; retry later.",
    );
  }
  // Per source too, so one host holding several keys is still bounded.
  checkRate(
    deps,
    `dial@${requestAddress(c, deps.addressLimit.trusted)}`,
    "address_rate",
    "Too many calls placed from this address; retry later.",
  );
  const request = parseDialBody(await readJson(c), await deps.capabilities.get());
  let workspaceId: string;
  const caller: DialCaller = { key_id: null };
  if (who.kind === "key") {
    workspaceId = who.workspace_id;
    caller.key_id = who.key_id;
    caller.pendingPerKey = deps.settings.pendingSessionsPerKey;
  } else {
    const agent = await getAgent(deps.sql, request.agent_id);
    if (!agent) throw agentNotFound();
    workspaceId = agent.workspace_id;
  }
  const result = await dialNumber(deps, workspaceId, request, caller);
  if (!result.ok) {
    const r = result.refusal;
    throw new ApiError(r.status as 400, r.code, r.message, r.details, r.headers);
  }
  return c.json({ session_id: result.session_id, status: result.status }, 202);
}
