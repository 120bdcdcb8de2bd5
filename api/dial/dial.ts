// Placing one call (issue 34): what calls.dial does once the caller is known, and what campaigns
// call directly. Every check comes before anything is written (the agent, the `from` number,
// the trunk and its sealed credentials); then the session is reserved on a SIP node as an
// inbound phone call's is (nothing written when no node can take it), its token minted, and the
// WorkerDial posted to that node. The worker answers 202 once the INVITE is on its way and owns
// the session from then on; any other answer (or none in time) fails the session here.
import { newId } from "../../common/ids.ts";
import { withAgentLevels } from "../connect/sensitivity.ts";
import { callSpeech } from "../../common/capabilities.ts";
import type { DialTrunk, WorkerDial } from "../../common/dial.ts";
import { ApiError } from "../../common/http/errors.ts";
import { logger } from "../../common/log.ts";
import { open, SealedOpenError, TRUNK_CREDENTIALS_KEY } from "../../common/sealed.ts";
import { getAgent } from "../../db/agents.ts";
import { type NumberOwner, numberOwner, workspaceUsesTrunk } from "../../db/phone_numbers.ts";
import { placeCarrierCall, workerMachineDetection } from "../telephony/dial.ts";
import {
  type ChosenNode,
  finishSession,
  type NewSession,
  reserveSession,
} from "../../db/sessions.ts";
import { getOutboundTrunk } from "../../db/trunks.ts";
import type { ApiDeps } from "../context.ts";
import type { DialRequest } from "./parse.ts";
import { sessionToken } from "../session_token.ts";

const log = logger("dial");

/** How long the worker has to take the call before the dial is given up as unreachable. */
export const WORKER_DIAL_TIMEOUT_MS = 5_000;
/** What a client is told to wait when no SIP node has room (about a pre-offer hold's turn). */
const NO_NODE_RETRY_AFTER_SECONDS = 5;
/** A session's token outlives the ring time by this much (the worker's setup and answer). */
const TOKEN_MARGIN_SECONDS = 60;

export interface DialPlaced {
  session_id: string;
  node_id: string;
  status: "dialing";
}

/** A refusal: the status and error a client is answered with; `written` says if a session was. */
export interface DialRefusal {
  status: number;
  code: string;
  message: string;
  details: Record<string, unknown>;
  headers: Record<string, string>;
  /** The session failed by the worker's refusal (dial_failed, worker_unreachable); else none. */
  session_id?: string;
}

export type DialResult = ({ ok: true } & DialPlaced) | { ok: false; refusal: DialRefusal };

export interface DialCaller {
  /** The key the session is booked to (null: the admin token, a campaign). */
  key_id: string | null;
  /** Sessions of that key that may wait for their call to start (0: no limit). */
  pendingPerKey?: number;
}

/** The path of the dial endpoint on a worker node (media/ serves it). */
export function dialEndpoint(offerBaseUrl: string, sessionId: string): string {
  return `${offerBaseUrl.replace(/\/+$/, "")}/sessions/${sessionId}/dial`;
}

/** Places the call `request` asks for in `workspaceId`; never throws an ApiError. */
export async function dialNumber(
  deps: ApiDeps,
  workspaceId: string,
  request: DialRequest,
  caller: DialCaller = { key_id: null },
): Promise<DialResult> {
  try {
    return { ok: true, ...await place(deps, workspaceId, request, caller) };
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return {
      ok: false,
      refusal: {
        status: err.status,
        code: err.code,
        message: err.message,
        details: err.details,
        headers: err.headers,
        session_id: typeof err.details.session_id === "string" ? err.details.session_id : undefined,
      },
    };
  }
}

export const agentNotFound = () =>
  new ApiError(404, "agent_not_found", "No such agent in this workspace.", { field: "agent_id" });

/** The `from` number's row, when the workspace owns it; else a refusal naming the field. */
async function ownedFrom(deps: ApiDeps, workspaceId: string, from: string): Promise<NumberOwner> {
  const owner = await numberOwner(deps.sql, from);
  if (!owner || owner.workspace_id !== workspaceId) {
    throw new ApiError(
      400,
      "from_not_owned",
      "from is not one of this workspace's phone numbers (numbers.create gives it one).",
      { field: "from" },
    );
  }
  return owner;
}

/** The trunk's edge and credentials as the worker needs them: every refusal before a write. */
async function dialTrunk(
  deps: ApiDeps,
  workspaceId: string,
  request: DialRequest,
  owner: NumberOwner,
): Promise<DialTrunk> {
  const trunkId = request.trunk_id ?? owner.trunk_id;
  if (trunkId === null) {
    throw new ApiError(
      400,
      "no_trunk",
      "from is on no trunk, so there is nothing to call over: give trunk_id, or put the number " +
        "on a trunk with an outbound_address.",
      { field: "trunk_id" },
    );
  }
  const trunk = await getOutboundTrunk(deps.sql, trunkId);
  // A trunk none of the workspace's numbers is on is another workspace's business: not found.
  if (
    !trunk ||
    (trunkId !== owner.trunk_id && !await workspaceUsesTrunk(deps.sql, workspaceId, trunkId))
  ) {
    throw new ApiError(404, "trunk_not_found", "No such trunk for this workspace.", {
      field: "trunk_id",
    });
  }
  if (trunk.outbound_address === null) {
    throw new ApiError(
      400,
      "trunk_not_outbound",
      "The trunk has no outbound_address, so it cannot place calls (trunks.update sets one).",
      { field: "trunk_id", trunk_id: trunkId },
    );
  }
  const out: DialTrunk = {
    trunk_id: trunkId,
    address: trunk.outbound_address,
    transport: trunk.outbound_transport,
  };
  if (trunk.outbound_username === null) return out;
  // The operator's configuration is broken, not the request: a 500 that says what to fix.
  if (!deps.trunkKey) {
    throw new ApiError(
      500,
      "trunk_credentials_unreadable",
      `The trunk's outbound credentials cannot be opened: ${TRUNK_CREDENTIALS_KEY} is not set.`,
      { trunk_id: trunkId },
    );
  }
  try {
    out.password = await open(deps.trunkKey, trunk.outbound_password_sealed!, trunkId);
  } catch (err) {
    if (!(err instanceof SealedOpenError)) throw err;
    log.error("a trunk's outbound credentials do not open", { trunk_id: trunkId });
    throw new ApiError(
      500,
      "trunk_credentials_unreadable",
      `The trunk's outbound credentials do not open with this ${TRUNK_CREDENTIALS_KEY} ` +
        "(sealed under another key): set the key they were sealed with, or store them again.",
      { trunk_id: trunkId },
    );
  }
  out.username = trunk.outbound_username;
  return out;
}

async function place(
  deps: ApiDeps,
  workspaceId: string,
  request: DialRequest,
  caller: DialCaller,
): Promise<DialPlaced> {
  const agent = await getAgent(deps.sql, request.agent_id);
  if (!agent || agent.workspace_id !== workspaceId) throw agentNotFound();
  const owner = await ownedFrom(deps, workspaceId, request.from);
  // Through a carrier's call API, or over a SIP trunk the worker dials itself.
  const trunk = request.carrier ? undefined : await dialTrunk(deps, workspaceId, request, owner);
  // A carrier's stream is admitted by the token naming that carrier, as an inbound one's is.
  // It also says the stream is a placed call and which machine detection the worker runs on it.
  const input = request.carrier
    ? {
      ...request.input,
      metadata: {
        ...request.input.metadata,
        phone_carrier: request.carrier,
        phone_direction: "outbound",
        phone_machine_detection: workerMachineDetection(request.carrier, request.machine_detection),
      },
    }
    : request.input;
  const now = Date.now();
  const ttl = Math.max(
    deps.settings.tokenTtlSeconds,
    request.ring_timeout_seconds + TOKEN_MARGIN_SECONDS,
  );
  const session: NewSession = {
    session_id: newId("ses"),
    agent_id: agent.agent_id,
    workspace_id: workspaceId,
    key_id: caller.key_id,
    token_id: newId("tok"),
    token_expires_at: new Date((Math.floor(now / 1000) + ttl) * 1000),
    agent_input: withAgentLevels(input, agent),
    display_name: request.input.display_name,
    metadata: input.metadata,
    record_requested: request.input.record,
    record_effective: request.input.record ?? agent.record_by_default,
  };
  // No pre-offer hold: the slot is held while the phone rings (until the token expires or the
  // worker moves the session on), since the worker is busy with the call all that time.
  const reservation = await reserveSession(
    deps.reservations,
    session,
    deps.settings.nodeStaleSeconds,
    callSpeech(request.input.config),
    {
      phone: true,
      sip: trunk !== undefined,
      outbound: true,
      ...(trunk ? { trunk: { id: trunk.trunk_id, pending: 0 } } : {}),
      pendingPerKey: caller.key_id === null ? 0 : caller.pendingPerKey ?? 0,
    },
  );
  if (reservation.kind === "pending_limit") {
    const wait = reservation.retryAfterSeconds;
    throw new ApiError(
      429,
      "rate_limited",
      "Too many calls of this key are waiting to start; retry later.",
      { retry_after_seconds: wait, limit: "pending_sessions" },
      { "Retry-After": String(wait) },
    );
  }
  if (reservation.kind !== "reserved") {
    throw new ApiError(
      503,
      "no_sip_worker",
      reservation.kind === "full"
        ? "Every worker node that places phone calls for this agent is full; try again shortly."
        : "No worker node places phone calls (SIP) for this agent now; try again shortly.",
      { retry_after_seconds: NO_NODE_RETRY_AFTER_SECONDS },
      { "Retry-After": String(NO_NODE_RETRY_AFTER_SECONDS) },
    );
  }
  const token = await sessionToken(deps.signer, session, reservation.node.node_id, now);
  if (request.carrier) {
    return await throughCarrier(deps, request, session.session_id, reservation.node, token);
  }
  const dial: WorkerDial = {
    trunk: trunk!,
    to: request.to,
    from: request.from,
    ring_timeout_seconds: request.ring_timeout_seconds,
    machine_detection: request.machine_detection,
  };
  await postDial(deps, reservation.node, session.session_id, token, dial);
  log.info("dialing", {
    session_id: session.session_id,
    agent_id: session.agent_id,
    node_id: reservation.node.node_id,
    trunk_id: dial.trunk.trunk_id,
  });
  return { session_id: session.session_id, node_id: reservation.node.node_id, status: "dialing" };
}

/** Asks the carrier to place the reserved call; its refusal has ended the session dial_failed. */
async function throughCarrier(
  deps: ApiDeps,
  request: DialRequest,
  sessionId: string,
  node: ChosenNode,
  token: string,
): Promise<DialPlaced> {
  const result = await placeCarrierCall(deps, request.carrier!, {
    session_id: sessionId,
    offer_base_url: node.offer_base_url,
    token,
  }, {
    to: request.to,
    from: request.from,
    ring_timeout_seconds: request.ring_timeout_seconds,
    machine_detection: request.machine_detection,
  });
  if ("refused" in result) {
    throw new ApiError(
      502,
      "dial_failed",
      `${request.carrier} did not take the call (${result.refused.code}); the session ended ` +
        "failed / dial_failed.",
      { session_id: sessionId, carrier: request.carrier, carrier_code: result.refused.code },
    );
  }
  log.info("dialing", { session_id: sessionId, node_id: node.node_id, carrier: request.carrier });
  return { session_id: sessionId, node_id: node.node_id, status: "dialing" };
}

/** The worker's error, when its answer is the envelope; bounded, since it is echoed back. */
function workerError(body: unknown): { code?: string; message?: string } {
  const e = (body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  return {
    code: typeof e?.code === "string" ? e.code.slice(0, 64) : undefined,
    message: typeof e?.message === "string" ? e.message.slice(0, 300) : undefined,
  };
}

/** Posts the dial; a refusal or silence fails the session and throws the answer to give. */
async function postDial(
  deps: ApiDeps,
  node: ChosenNode,
  sessionId: string,
  token: string,
  dial: WorkerDial,
): Promise<void> {
  const timeoutMs = deps.dialTimeoutMs ?? WORKER_DIAL_TIMEOUT_MS;
  let res: Response;
  try {
    res = await fetch(dialEndpoint(node.offer_base_url, sessionId), {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(dial),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    await finishSession(deps.sql, sessionId, "failed", "worker_unreachable");
    log.warn("the worker did not take the dial", {
      session_id: sessionId,
      node_id: node.node_id,
      cause: (err as Error).name,
    });
    throw new ApiError(
      503,
      "worker_unreachable",
      `The worker node chosen for the call did not answer within ${timeoutMs / 1000} s; ` +
        "nothing was dialled. Try again.",
      { session_id: sessionId, node_id: node.node_id, retry_after_seconds: 1 },
      { "Retry-After": "1" },
    );
  }
  const text = await res.text().catch(() => "");
  if (res.status === 202 || res.status === 200 || res.status === 201) return;
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch { /* not JSON: only the status is told */ }
  const worker = workerError(body);
  await finishSession(deps.sql, sessionId, "failed", "dial_failed");
  log.warn("the worker refused the dial", {
    session_id: sessionId,
    node_id: node.node_id,
    status: res.status,
    code: worker.code,
  });
  throw new ApiError(
    502,
    "dial_failed",
    `The worker node refused the call (${res.status}${
      worker.message ? `: ${worker.message}` : ""
    }); nothing was dialled.`,
    {
      session_id: sessionId,
      node_id: node.node_id,
      worker_status: res.status,
      worker_code: worker.code ?? null,
    },
  );
}
