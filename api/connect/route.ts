// POST /api/v1/sessions.connect and sessions.create: the front door of every call.
// Check order: credential (401) → origin (403) → per-address rate, pk_ keys only (429) → per-key
// rate (429) → body (413/400) → agent (404) → recording (400) → sessions waiting for their
// offer, per key (429) → node (500). The last two are one SQL statement with the reservation;
// nothing is written before every check has passed (docs/security.md).
import type { Context } from "hono";
import type { TurnSensitivity } from "../../common/turn_sensitivity.ts";
import { withAgentLevels } from "./sensitivity.ts";
import { newId } from "../../common/ids.ts";
import { createSessionRecord, type NewSession, reserveSession } from "../../db/sessions.ts";
import { callSpeech } from "../../common/capabilities.ts";
import { getAgent } from "../../db/agents.ts";
import { getSession } from "../../db/session_records.ts";
import type { KeyGrant } from "../../db/keys.ts";
import { logger } from "../../common/log.ts";
import { adminOrSecretKey, apiKey } from "../auth/credentials.ts";
import { originAllowed } from "../auth/origin.ts";
import { readJson } from "../body.ts";
import { ApiError } from "../../common/http/errors.ts";
import type { ApiDeps } from "../context.ts";
import { type ConnectRequest, parseConnectBody } from "./parse.ts";
import { sessionToken } from "../session_token.ts";

const log = logger("connect");

/** The path of the offer endpoint on a worker node (media/signaling serves it). */
export function offerEndpoint(offerBaseUrl: string, sessionId: string): string {
  return `${offerBaseUrl.replace(/\/+$/, "")}/sessions/${sessionId}/offer`;
}

interface Admitted {
  req: ConnectRequest;
  agentId: string;
  workspaceId: string;
  keyId: string | null;
  recordEffective: boolean;
  /** The agent's turn sensitivity: the call's config takes it where it does not choose. */
  levels: Required<TurnSensitivity>;
}

function checkOrigin(c: Context, grant: KeyGrant) {
  if (grant.kind !== "publishable") return;
  if (!originAllowed(c.req.header("origin"), grant.allowed_origins)) {
    throw new ApiError(
      403,
      "origin_not_allowed",
      "This publishable key may not be used from this origin.",
      { origin: c.req.header("origin") ?? null },
    );
  }
}

const rateLimited = (wait: number, message: string, limit: string) =>
  new ApiError(
    429,
    "rate_limited",
    message,
    { retry_after_seconds: wait, limit },
    { "Retry-After": String(wait) },
  );

function checkRate(deps: ApiDeps, keyId: string) {
  const wait = deps.limiter.take(keyId);
  if (wait > 0) {
    throw rateLimited(wait, "Too many sessions started with this key; retry later.", "key_rate");
  }
}

/**
 * A publishable key is public, so its connects are also limited per client address (the TCP
 * peer, or X-Forwarded-For behind TRUSTED_PROXIES).
 */
function checkAddressRate(c: Context, deps: ApiDeps, grant: KeyGrant) {
  if (grant.kind !== "publishable") return;
  const wait = deps.addressLimit.take(c);
  if (wait > 0) {
    throw rateLimited(
      wait,
      "Too many sessions started from this address; retry later.",
      "address_rate",
    );
  }
}

const agentNotFound = () =>
  new ApiError(404, "agent_not_found", "No such agent in this key's workspace.");

/** Every check of a connect body for a key's grant; returns what the session row needs. */
async function admitKey(c: Context, deps: ApiDeps, grant: KeyGrant): Promise<Admitted> {
  checkOrigin(c, grant);
  checkAddressRate(c, deps, grant);
  checkRate(deps, grant.key_id);
  const req = parseConnectBody(await readJson(c), await deps.capabilities.get());
  // A credential names exactly one agent; any other agent id, in this workspace or another, is
  // not found for it.
  if (req.agent_id !== grant.agent_id) throw agentNotFound();
  if (req.input.record === true && grant.kind === "publishable") {
    throw new ApiError(
      400,
      "recording_not_permitted",
      "A publishable key cannot turn recording on; use a secret key from your server.",
      { field: "record" },
    );
  }
  return {
    req,
    agentId: grant.agent_id,
    workspaceId: grant.workspace_id,
    keyId: grant.key_id,
    recordEffective: req.input.record ?? grant.record_by_default,
    levels: grant,
  };
}

function newSession(a: Admitted, deps: ApiDeps, now = Date.now()): NewSession {
  return {
    session_id: newId("ses"),
    agent_id: a.agentId,
    workspace_id: a.workspaceId,
    key_id: a.keyId,
    token_id: newId("tok"),
    token_expires_at: new Date(
      (Math.floor(now / 1000) + deps.settings.tokenTtlSeconds) * 1000,
    ),
    agent_input: withAgentLevels(a.req.input, a.levels),
    display_name: a.req.input.display_name,
    metadata: a.req.input.metadata,
    record_requested: a.req.input.record,
    record_effective: a.recordEffective,
  };
}

/** How long a client is told to wait when every worker is full (about a pre-offer hold's turn). */
const WORKERS_FULL_RETRY_AFTER_SECONDS = 2;

export async function connect(c: Context, deps: ApiDeps): Promise<Response> {
  const grant = await apiKey(c, deps);
  const admitted = await admitKey(c, deps, grant);
  // One clock reading for the stored expiry and the token's iat: read twice, a second boundary
  // between them made the token's lifetime one second short of TOKEN_TTL_SECONDS.
  const now = Date.now();
  const session = newSession(admitted, deps, now);
  const reservation = await reserveSession(
    deps.reservations,
    session,
    deps.settings.nodeStaleSeconds,
    callSpeech(admitted.req.input.config),
    {
      holdSeconds: deps.settings.preOfferHoldSeconds,
      pendingPerKey: deps.settings.pendingSessionsPerKey,
    },
  );
  if (reservation.kind === "pending_limit") {
    throw rateLimited(
      reservation.retryAfterSeconds,
      "Too many sessions of this key are waiting for their call to start; retry later.",
      "pending_sessions",
    );
  }
  if (reservation.kind === "full") {
    // Every live node that serves the call is full (other keys', trunks' or webhooks' calls took
    // the slots): a passing condition, so a 503 the client retries, and nothing was written.
    log.warn("every worker node is full", { agent_id: session.agent_id });
    throw new ApiError(
      503,
      "workers_full",
      "Every worker node that serves this agent is full; try again shortly.",
      { retry_after_seconds: WORKERS_FULL_RETRY_AFTER_SECONDS },
      { "Retry-After": String(WORKERS_FULL_RETRY_AFTER_SECONDS) },
    );
  }
  if (reservation.kind === "replayed") throw new Error("a connect uses no admission keys");
  if (reservation.kind === "no_node") {
    log.warn("no worker node for session", {
      session_id: session.session_id,
      agent_id: session.agent_id,
    });
    throw new ApiError(
      500,
      "missing_connect_params",
      "No worker node is available to take this call; try again shortly.",
      { session_id: session.session_id },
    );
  }
  const node = reservation.node;
  const token = await sessionToken(deps.signer, session, node.node_id, now);
  log.info("session created", {
    session_id: session.session_id,
    agent_id: session.agent_id,
    node_id: node.node_id,
    key: grant.kind,
  });
  return c.json({
    webrtc_request_params: {
      endpoint: offerEndpoint(node.offer_base_url, session.session_id),
      headers: { Authorization: `Bearer ${token}` },
    },
    session_id: session.session_id,
  });
}

/** sessions.create: the same checks, then the record (status `created`) instead of parameters. */
export async function create(c: Context, deps: ApiDeps): Promise<Response> {
  const caller = await adminOrSecretKey(c, deps);
  let admitted: Admitted;
  if (caller.kind === "key") {
    admitted = await admitKey(c, deps, caller.grant);
  } else {
    const req = parseConnectBody(await readJson(c), await deps.capabilities.get());
    const agent = await getAgent(deps.sql, req.agent_id);
    if (!agent) throw agentNotFound();
    admitted = {
      req,
      agentId: agent.agent_id,
      workspaceId: agent.workspace_id,
      keyId: null,
      recordEffective: req.input.record ?? agent.record_by_default,
      levels: agent,
    };
  }
  const session = newSession(admitted, deps);
  await createSessionRecord(deps.sql, session);
  const record = await getSession(deps.sql, session.session_id);
  const { workspace_id: _ws, ...body } = record!;
  return c.json(body);
}
