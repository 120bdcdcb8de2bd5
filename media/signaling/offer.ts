// The offer endpoint of this worker node, as the Pipecat small-webrtc client speaks it:
// POST {sdp,type,pc_id,restart_pc,requestData} → {sdp,type:"answer",pc_id}; PATCH for trickled
// candidates. The session token decides: signature, this node, this session, not expired, and
// used once — a renegotiation or restart_pc of the same call is not a reuse.
// Order: the credential first (the token, then the session row: not used, not expired; for a
// running call, its pc_id), then the body and its SDP, then the token is spent atomically
// (markConnecting). A bad offer from the rightful holder is a 400 and leaves the token unspent;
// a spent or foreign token is refused as such whatever the body holds.
import type { Context } from "hono";
import { markConnecting, type SessionTokenState, sessionTokenState } from "../../db/sessions.ts";
import { getSession } from "../../db/session_records.ts";
import { getAgent } from "../../db/agents.ts";
import { ApiError, invalidRequest } from "../../common/http/errors.ts";
import { readJson } from "../../common/http/json_body.ts";
import { bearerToken } from "../../common/http/bearer.ts";
import { type SessionClaims, TokenError, type TokenVerifier } from "../../common/token.ts";
import { logger } from "../../common/log.ts";
import { NoMediaPortError, OfferError, WorkerPeer } from "../rtc/peer.ts";
import { WebLine } from "../call/web_line.ts";
import { type CallNode, startCall } from "../call/node_calls.ts";
import type { Call } from "../call/call.ts";
import { SessionLog } from "../call/session_log.ts";

const log = logger("signaling");

/**
 * What the offer routes read and change of the node (media/worker.ts's WorkerContext has all of
 * it). Declared here, not imported from worker.ts, which imports these routes: no import circle.
 */
export interface OfferNode extends CallNode {
  /** Calls on this node by session id: a new call is added, an ended one removes itself. */
  calls: Map<string, Call>;
  nodeId: string;
  verifier: TokenVerifier;
  iceAddresses: string[];
  /** Passive TCP candidates in answers (ICE_TCP, default on). */
  iceTcp?: boolean;
  /** RTC_PORTS: the [first, last] ports calls' ICE sockets bind (unset: any). */
  icePortRange?: [number, number];
}

/** A browser trickles a handful; each costs werift work on the event loop that paces every call. */
export const MAX_CANDIDATES_PER_PATCH = 20;

function tokenOf(c: Context): string {
  const token = bearerToken(c);
  if (!token) {
    throw new ApiError(401, "unauthorized", "Send Authorization: Bearer <session token>.");
  }
  return token;
}

/** Verifies a token for this node and the session `sessionId`. */
async function verifiedClaims(
  w: Pick<OfferNode, "verifier" | "nodeId">,
  token: string,
  sessionId: string | undefined,
  options: { ignoreExpiry?: boolean } = {},
): Promise<SessionClaims> {
  let claims: SessionClaims;
  try {
    claims = await w.verifier.verify(token, w.nodeId, options);
  } catch (err) {
    if (!(err instanceof TokenError)) throw err;
    if (err.reason === "wrong_node") throw new ApiError(403, "wrong_node", err.message);
    throw new ApiError(401, err.reason, err.message);
  }
  if (claims.sid !== sessionId) {
    throw new ApiError(403, "wrong_session", "The session token is for another session.");
  }
  return claims;
}

/** Verifies the token for this node and the session in the URL. */
function claimsFor(
  c: Context,
  w: OfferNode,
  options: { ignoreExpiry?: boolean } = {},
): Promise<SessionClaims> {
  return verifiedClaims(w, tokenOf(c), c.req.param("session_id"), options);
}

const tokenUsed = () =>
  new ApiError(401, "token_used", "This session token has already started a call.");
const tokenExpired = () => new ApiError(401, "token_expired", "The session token has expired.");
const sessionNotFound = () => new ApiError(404, "session_not_found", "No such session.");
const peerNotFound = () =>
  new ApiError(404, "peer_not_found", "No peer connection with this pc_id.");

/** Retry-After of a node-full or port-less refusal: a slot or port frees when a call ends. */
const RETRY_SHORTLY_SECONDS = 2;

/** A passing shortage on this node: a 5xx with Retry-After, retried while the token lasts. */
const retryShortly = (code: string, message: string, details: Record<string, unknown> = {}) =>
  new ApiError(
    503,
    code,
    message,
    { ...details, retry_after_seconds: RETRY_SHORTLY_SECONDS },
    { "Retry-After": String(RETRY_SHORTLY_SECONDS) },
  );

/**
 * The session's pre-offer hold lapsed (its slot went back to the node) and the node has no room
 * now: a slot may free up while its token is still valid.
 */
const nodeFull = (nodeId: string) =>
  retryShortly("node_full", "This worker node has no room for the call now; retry shortly.", {
    node_id: nodeId,
  });

/** Why a token that verified may not start a call now, from its session's row (SIP admission too). */
export function refusalFor(
  state: SessionTokenState | undefined,
  claims: SessionClaims,
  nodeId: string,
): ApiError | undefined {
  if (!state) return sessionNotFound();
  const expired = state.token_expires_at !== null &&
    state.token_expires_at.getTime() <= Date.now();
  if (state.status === "expired" || (state.status === "created" && expired)) {
    return tokenExpired();
  }
  if (state.status !== "created" || state.token_id !== claims.jti || state.node_id !== nodeId) {
    return tokenUsed();
  }
  return undefined;
}

/** The token may start the call: its session is waiting for it, on this node. */
async function checkUnspent(
  w: Pick<OfferNode, "sql" | "nodeId">,
  sessionId: string,
  claims: SessionClaims,
) {
  const state = await sessionTokenState(w.sql, sessionId);
  const refusal = refusalFor(state, claims, w.nodeId);
  if (refusal) throw refusal;
  // Its hold lapsed and the node is full: refuse before building a peer (markConnecting decides
  // for good, atomically, after the SDP is read).
  if (!state!.holds_slot && !state!.node_has_room) throw nodeFull(w.nodeId);
}

/** The body as JSON, or undefined when it cannot be read (too large, not JSON). */
async function bodyOrNothing(c: Context): Promise<unknown> {
  try {
    return await readJson(c);
  } catch (err) {
    if (err instanceof ApiError) return undefined;
    throw err;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

interface OfferBody {
  sdp: string;
  type: "offer";
  pc_id: string | null;
  restart_pc: boolean;
}

function readOffer(body: unknown): OfferBody {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw invalidRequest("", "The offer must be a JSON object.");
  }
  const b = body as Record<string, unknown>;
  if (b.type !== "offer") throw invalidRequest("type", 'type must be "offer".');
  if (typeof b.sdp !== "string" || b.sdp === "") {
    throw invalidRequest("sdp", "sdp must be the offer's SDP text.");
  }
  if (b.pc_id !== undefined && b.pc_id !== null && typeof b.pc_id !== "string") {
    throw invalidRequest("pc_id", "pc_id must be a string or null.");
  }
  if (b.restart_pc !== undefined && typeof b.restart_pc !== "boolean") {
    throw invalidRequest("restart_pc", "restart_pc must be true or false.");
  }
  return {
    sdp: b.sdp,
    type: "offer",
    pc_id: (b.pc_id as string | null | undefined) ?? null,
    restart_pc: b.restart_pc === true,
  };
}

/**
 * An offer no retry can fix becomes a 400 (the client then gives up); a node with no media port
 * free a 503 (a port frees when a call ends, so the client retries); anything else passes.
 */
function refuseBadOffer(err: unknown): never {
  if (err instanceof OfferError) throw new ApiError(400, "invalid_sdp", err.message);
  if (err instanceof NoMediaPortError) {
    log.warn("offer refused: no media port", { cause: err.message });
    throw retryShortly(
      "no_media_port",
      "No WebRTC media port (RTC_PORTS) is free on this worker node now; retry shortly.",
    );
  }
  throw err;
}

function answerOffer(w: OfferNode, offer: OfferBody) {
  const ice = { iceAddresses: w.iceAddresses, iceTcp: w.iceTcp, icePortRange: w.icePortRange };
  return WorkerPeer.answer({ type: "offer", sdp: offer.sdp }, ice).catch(refuseBadOffer);
}

const reply = (c: Context, sdp: string, pcId: string) =>
  c.json({ sdp, type: "answer", pc_id: pcId });

export async function postOffer(c: Context, w: OfferNode): Promise<Response> {
  const sessionId = c.req.param("session_id")!;
  // A phone call on this session is not a web call to renegotiate: its token is spent.
  const found = w.calls.get(sessionId);
  const running = found?.line instanceof WebLine ? found.line : undefined;
  // A call already running on this token: renegotiation or restart, not a second start.
  const claims = await claimsFor(c, w, { ignoreExpiry: running !== undefined });
  if (found && !running) throw tokenUsed();

  if (running && found!.tokenId === claims.jti) {
    // The token is spent; only the connection it started (named by its pc_id) may go on.
    const body = await bodyOrNothing(c);
    const pcId = isObject(body) ? body.pc_id : undefined;
    if (typeof pcId !== "string" || pcId !== running.peer.id) throw tokenUsed();
    const offer = readOffer(body);
    if (!offer.restart_pc) {
      const answer = await running.peer.renegotiate({ type: "offer", sdp: offer.sdp })
        .catch(refuseBadOffer);
      return reply(c, answer.sdp, running.peer.id);
    }
    const { peer, answer } = await answerOffer(w, offer);
    await running.replacePeer(peer);
    return reply(c, answer.sdp, peer.id);
  }
  if (claims.exp * 1000 <= Date.now()) throw tokenExpired();
  await checkUnspent(w, sessionId, claims);

  // Then the offer (a bad one must not burn the token), then take the session atomically.
  const offer = readOffer(await readJson(c));
  const { peer, answer } = await answerOffer(w, offer);
  const taken = await markConnecting(w.sql, sessionId, claims.jti, w.nodeId);
  if (taken !== "connected") {
    await peer.close();
    if (taken === "node_full") throw nodeFull(w.nodeId);
    // Taken or ended since the check above.
    const record = await getSession(w.sql, sessionId);
    if (!record) throw sessionNotFound();
    if (record.status === "expired") throw tokenExpired();
    throw tokenUsed();
  }
  const agent = await getAgent(w.sql, claims.sub);
  const sessionLog = new SessionLog(w.sql, sessionId);
  const line = new WebLine(peer, { log: sessionLog });
  startCall(w, line, { claims, brainUrl: agent?.brain_url ?? "", log: sessionLog });
  log.info("offer accepted", { session_id: sessionId, pc_id: peer.id });
  return reply(c, answer.sdp, peer.id);
}

export async function patchCandidates(c: Context, w: OfferNode): Promise<Response> {
  const sessionId = c.req.param("session_id")!;
  const claims = await claimsFor(c, w, { ignoreExpiry: true });
  const found = w.calls.get(sessionId);
  const call = found?.line instanceof WebLine ? found.line : undefined;
  if (!call || found!.tokenId !== claims.jti) {
    // No call of this token runs here: before its offer there is no peer to trickle to yet;
    // after its call the token is spent.
    const refusal = refusalFor(await sessionTokenState(w.sql, sessionId), claims, w.nodeId);
    throw refusal ?? peerNotFound();
  }
  const body = await readJson(c);
  const b = isObject(body) ? body : {};
  if (b.pc_id !== call.peer.id) throw peerNotFound();
  if (!Array.isArray(b.candidates)) {
    throw invalidRequest("candidates", "candidates must be an array.");
  }
  if (b.candidates.length > MAX_CANDIDATES_PER_PATCH) {
    throw invalidRequest(
      "candidates",
      `At most ${MAX_CANDIDATES_PER_PATCH} candidates per request.`,
    );
  }
  for (const [i, cand] of b.candidates.entries()) {
    if (typeof cand !== "object" || cand === null || typeof cand.candidate !== "string") {
      throw invalidRequest(`candidates.${i}`, "Each candidate needs a candidate string.");
    }
    try {
      await call.peer.addIceCandidate(cand);
    } catch (err) {
      // A candidate werift cannot use is skipped, as a browser would.
      log.warn("candidate refused", { session_id: sessionId, cause: (err as Error).message });
    }
  }
  return c.json({ status: "success" });
}

/**
 * A session token that comes some other way than an offer's bearer header (a telephony
 * provider's media stream carries it in its start message or its URL), checked as an offer's is
 * and in the offer's order (signature, node, session, `check`, expiry, the session row) without
 * spending it. Every refusal is the offer's ApiError and changes nothing.
 */
export async function checkSessionToken(
  w: Pick<OfferNode, "verifier" | "nodeId" | "sql">,
  sessionId: string,
  token: string,
  /** A further check of the verified claims (throws an ApiError). */
  check?: (claims: SessionClaims) => void,
): Promise<SessionClaims> {
  const claims = await verifiedClaims(w, token, sessionId);
  check?.(claims);
  if (claims.exp * 1000 <= Date.now()) throw tokenExpired();
  await checkUnspent(w, sessionId, claims);
  return claims;
}

/** checkSessionToken, then the token is spent atomically, once (as an accepted offer's is). */
export async function spendSessionToken(
  w: Pick<OfferNode, "verifier" | "nodeId" | "sql">,
  sessionId: string,
  token: string,
  check?: (claims: SessionClaims) => void,
): Promise<SessionClaims> {
  const claims = await checkSessionToken(w, sessionId, token, check);
  const taken = await markConnecting(w.sql, sessionId, claims.jti, w.nodeId);
  if (taken === "connected") return claims;
  if (taken === "node_full") throw nodeFull(w.nodeId);
  const record = await getSession(w.sql, sessionId);
  if (!record) throw sessionNotFound();
  if (record.status === "expired") throw tokenExpired();
  throw tokenUsed();
}
