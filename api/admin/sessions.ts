// sessions.get / sessions.list: the admin token sees every session, a secret key its agent's.
import type { Context } from "hono";
import type { SessionStatus } from "../../db/sessions.ts";
import {
  decodeSessionCursor,
  encodeSessionCursor,
  getSession,
  listSessions,
} from "../../db/session_records.ts";
import { adminOrSecretKey, type Caller } from "../auth/credentials.ts";
import { optionalString, readObject, requiredString } from "../body.ts";
import { ApiError, invalidRequest } from "../../common/http/errors.ts";
import type { ApiDeps } from "../context.ts";

const STATUSES: SessionStatus[] = ["created", "connecting", "active", "ended", "failed", "expired"];
const MAX_LIMIT = 200;

const scopeOf = (caller: Caller) =>
  caller.kind === "key"
    ? { workspace_id: caller.grant.workspace_id, agent_id: caller.grant.agent_id }
    : {};

export async function get(c: Context, deps: ApiDeps): Promise<Response> {
  const caller = await adminOrSecretKey(c, deps);
  const body = await readObject(c, ["session_id"]);
  const found = await getSession(deps.sql, requiredString(body, "session_id"), scopeOf(caller));
  if (!found) throw new ApiError(404, "session_not_found", "No such session.");
  const { workspace_id: _ws, ...record } = found;
  return c.json(record);
}

function readCursor(cursor: string) {
  const decoded = decodeSessionCursor(cursor);
  if (!decoded) throw invalidRequest("cursor", "cursor is not one this service returned.");
  return decoded;
}

export async function list(c: Context, deps: ApiDeps): Promise<Response> {
  const caller = await adminOrSecretKey(c, deps);
  const body = await readObject(c, ["agent_id", "status", "limit", "cursor"]);
  const status = optionalString(body, "status");
  if (status !== undefined && !STATUSES.includes(status as SessionStatus)) {
    throw invalidRequest("status", `status must be one of ${STATUSES.join(", ")}.`);
  }
  const limit = body.limit ?? 50;
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw invalidRequest("limit", `limit must be an integer from 1 to ${MAX_LIMIT}.`);
  }
  const cursor = optionalString(body, "cursor");
  const scope = scopeOf(caller);
  const agentId = optionalString(body, "agent_id");
  if (scope.agent_id && agentId && agentId !== scope.agent_id) {
    throw new ApiError(404, "agent_not_found", "No such agent in this key's workspace.");
  }
  const sessions = await listSessions(deps.sql, {
    ...scope,
    agent_id: scope.agent_id ?? agentId,
    status: status as SessionStatus | undefined,
    limit,
    cursor: cursor ? readCursor(cursor) : undefined,
  });
  return c.json({
    sessions,
    next_cursor: sessions.length === limit
      ? encodeSessionCursor(sessions[sessions.length - 1])
      : null,
  });
}
