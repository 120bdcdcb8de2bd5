// What a provider's media-stream WebSocket must show before the worker upgrades it
// (telephony_stream.ts). Issue 32: with no token at all, Plivo and
// Exotel upgrades were accepted and lived until the 10 s start deadline, and 16 MiB messages were
// read before any authentication (one: worker RSS +64 MB).
import type { Context } from "hono";
import { ApiError } from "../../common/http/errors.ts";
import { peerOf } from "../../common/http/peer.ts";
import { logger } from "../../common/log.ts";
import { RefusalLog } from "../../common/refusal_log.ts";
import { sessionTokenState } from "../../db/sessions.ts";
import type { OfferNode } from "./offer.ts";
import type { LineCarrier } from "../phone/carriers/carrier.ts";

/** Streams upgraded but not yet started on this worker, at most (the rest: 503). */
export const MAX_STREAMS_WAITING_FOR_START = 256;

const log = logger("telephony-stream");
const refusals = new RefusalLog(log);
/** Sessions with a stream upgraded and waiting for its start message. */
const waiting = new Set<string>();

/**
 * Refuses the upgrade unless the stream may open (see the file's head); `checkToken` checks a
 * URL token. Returns the release to call once the stream has started or ended.
 */
export async function guardUpgrade(
  c: Context,
  w: Pick<OfferNode, "sql" | "nodeId">,
  carrier: Pick<LineCarrier, "name" | "sessionToken">,
  sessionId: string,
  queryToken: string | undefined,
  checkToken: () => Promise<unknown>,
): Promise<() => void> {
  try {
    if (queryToken) await checkToken();
    else if (carrier.sessionToken === "url") {
      // This carrier's stream URL carries the token (its webhook in api/telephony/ puts it there).
      throw new ApiError(
        401,
        "unauthorized",
        "Send the session token as session_token in the stream URL.",
      );
    } else {
      // The stream URL takes no query (Twilio's): the token comes in the start message. Before
      // that, the session must be one the control plane opened on this node and still waiting.
      // The codes are the offer route's for the same cases.
      const state = await sessionTokenState(w.sql, sessionId);
      if (!state) throw new ApiError(404, "session_not_found", "No such session.");
      if (state.node_id !== w.nodeId) {
        throw new ApiError(403, "wrong_node", "This session's call is not on this node.");
      }
      if (state.status !== "created") {
        throw new ApiError(401, "token_used", "This session's call has already started.");
      }
    }
    if (waiting.has(sessionId)) {
      throw new ApiError(409, "stream_pending", "A stream for this session is already open.");
    }
    if (waiting.size >= MAX_STREAMS_WAITING_FOR_START) {
      throw new ApiError(503, "too_many_streams", "Too many streams are starting; retry.", {}, {
        "Retry-After": "1",
      });
    }
  } catch (err) {
    if (err instanceof ApiError) {
      const peer = peerOf(c);
      refusals.refused("stream upgrade refused", peer.address, err.code, {
        port: peer.port,
        carrier: carrier.name,
        session_id: sessionId,
      });
    }
    throw err;
  }
  waiting.add(sessionId);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    waiting.delete(sessionId);
  };
}
