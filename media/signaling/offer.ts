// The offer endpoint of this worker node, as the Pipecat small-webrtc client speaks it:
// POST {sdp,type,pc_id,restart_pc,requestData} → {sdp,type:"answer",pc_id}; PATCH for trickled
// candidates. The session token decides: signature, this node, this session, not expired, and
// used once — a renegotiation or restart_pc of the same call is not a reuse.
import type { Context } from "hono";
import { getSession, markConnecting } from "../../db/sessions.ts";
import { getAgent } from "../../db/agents.ts";
import { ApiError, invalidRequest } from "../../common/http/errors.ts";
import { readJson } from "../../common/http/json_body.ts";
import { bearerToken } from "../../common/http/bearer.ts";
import { type SessionClaims, TokenError } from "../../common/token.ts";
import { logger } from "../../common/log.ts";
import { OfferError, WorkerPeer } from "../rtc/peer.ts";
import { Call } from "../call/call.ts";
import type { WorkerContext } from "../worker.ts";

const log = logger("signaling");

function tokenOf(c: Context): string {
  const token = bearerToken(c);
  if (!token) {
    throw new ApiError(401, "unauthorized", "Send Authorization: Bearer <session token>.");
  }
  return token;
}

/** Verifies the token for this node and the session in the URL. */
async function claimsFor(
  c: Context,
  w: WorkerContext,
  options: { ignoreExpiry?: boolean } = {},
): Promise<SessionClaims> {
  let claims: SessionClaims;
  try {
    claims = await w.verifier.verify(tokenOf(c), w.nodeId, options);
  } catch (err) {
    if (!(err instanceof TokenError)) throw err;
    if (err.reason === "wrong_node") throw new ApiError(403, "wrong_node", err.message);
    throw new ApiError(401, err.reason, err.message);
  }
  if (claims.sid !== c.req.param("session_id")) {
    throw new ApiError(403, "wrong_session", "The session token is for another session.");
  }
  return claims;
}

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

/** An offer no retry can fix becomes a 400 (the client then gives up); anything else passes. */
function refuseBadOffer(err: unknown): never {
  if (err instanceof OfferError) throw new ApiError(400, "invalid_sdp", err.message);
  throw err;
}

function answerOffer(w: WorkerContext, offer: OfferBody) {
  return WorkerPeer.answer({ type: "offer", sdp: offer.sdp }, { iceAddresses: w.iceAddresses })
    .catch(refuseBadOffer);
}

const reply = (c: Context, sdp: string, pcId: string) =>
  c.json({ sdp, type: "answer", pc_id: pcId });

export async function postOffer(c: Context, w: WorkerContext): Promise<Response> {
  const sessionId = c.req.param("session_id")!;
  const running = w.calls.get(sessionId);
  // A call already running on this token: renegotiation or restart, not a second start.
  const claims = await claimsFor(c, w, { ignoreExpiry: running !== undefined });
  const offer = readOffer(await readJson(c));

  if (running && running.tokenId === claims.jti) {
    if (offer.pc_id === null || offer.pc_id !== running.peer.id) {
      throw new ApiError(401, "token_used", "This session token has already started a call.");
    }
    if (!offer.restart_pc) {
      const answer = await running.peer.renegotiate({ type: "offer", sdp: offer.sdp })
        .catch(refuseBadOffer);
      return reply(c, answer.sdp, running.peer.id);
    }
    const { peer, answer } = await answerOffer(w, offer);
    await running.replacePeer(peer);
    return reply(c, answer.sdp, peer.id);
  }
  if (claims.exp * 1000 <= Date.now()) {
    throw new ApiError(401, "token_expired", "The session token has expired.");
  }

  // Answer first (a bad offer must not burn the token), then take the session atomically.
  const { peer, answer } = await answerOffer(w, offer);
  if (!await markConnecting(w.sql, sessionId, claims.jti, w.nodeId)) {
    await peer.close();
    const record = await getSession(w.sql, sessionId);
    if (!record) throw new ApiError(404, "session_not_found", "No such session.");
    if (record.status === "expired") {
      throw new ApiError(401, "token_expired", "The session token has expired.");
    }
    throw new ApiError(401, "token_used", "This session token has already started a call.");
  }
  const agent = await getAgent(w.sql, claims.sub);
  const call = new Call(peer, {
    sessionId,
    tokenId: claims.jti,
    agentId: claims.sub,
    brainUrl: agent?.brain_url ?? "",
    input: claims.input as { init?: unknown; config?: unknown } | null,
    engines: w.engines,
    recordingsDir: w.recordingsDir,
    sql: w.sql,
    onEnded: (ended) => {
      if (w.calls.get(sessionId) === ended) w.calls.delete(sessionId);
    },
  });
  w.calls.set(sessionId, call);
  log.info("offer accepted", { session_id: sessionId, pc_id: peer.id });
  return reply(c, answer.sdp, peer.id);
}

export async function patchCandidates(c: Context, w: WorkerContext): Promise<Response> {
  await claimsFor(c, w, { ignoreExpiry: true });
  const body = await readJson(c);
  const b = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
  if (!Array.isArray(b.candidates)) {
    throw invalidRequest("candidates", "candidates must be an array.");
  }
  const call = w.calls.get(c.req.param("session_id")!);
  if (!call || call.peer.id !== b.pc_id) {
    throw new ApiError(404, "peer_not_found", "No peer connection with this pc_id.");
  }
  for (const [i, cand] of b.candidates.entries()) {
    if (typeof cand !== "object" || cand === null || typeof cand.candidate !== "string") {
      throw invalidRequest(`candidates.${i}`, "Each candidate needs a candidate string.");
    }
    try {
      await call.peer.addIceCandidate(cand);
    } catch (err) {
      // A candidate werift cannot use is skipped, as a browser would.
      log.warn("candidate refused", { session_id: call.sessionId, cause: (err as Error).message });
    }
  }
  return c.json({ status: "success" });
}
