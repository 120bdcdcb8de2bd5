// What an outbound call's status webhook does once its carrier's signature (or secret) checked
// out and the carrier's status was read into a DialProgress (each carrier's NAME/dial_status.ts
// maps its own statuses): the session's dial state moves forward (db/dial.ts setDialState), or the
// session ends with the contract's reason (common/dial.ts: `dial_failed` ends it `failed`, the
// others `ended`). The webhook's URL names the session; the session must be an outbound call of
// this carrier, and of this carrier call once its id is known. A status for a session that has
// already ended changes nothing (the worker, the ring timeout or an earlier status ended it).
import { ApiError } from "../../common/http/errors.ts";
import { logger } from "../../common/log.ts";
import type { DialEndReason, DialState } from "../../common/dial.ts";
import { setDialState } from "../../db/dial.ts";
import { finishSession } from "../../db/sessions.ts";
import { outboundSessionState } from "../../db/carrier_dial.ts";
import type { ApiDeps } from "../context.ts";

const log = logger("telephony");

export type DialProgress =
  | { state: DialState }
  | { end: DialEndReason }
  /** A status that changes nothing here (queued, initiated, completed after an answer). */
  | { none: string };

export const dialEndStatus = (reason: DialEndReason): "ended" | "failed" =>
  reason === "dial_failed" ? "failed" : "ended";

/**
 * Applies a verified status to the session: `changed` when it moved the dial state or ended the
 * session; `open` when the session is still open after it (an answer for an ended one is hung up).
 */
export async function applyDialProgress(
  deps: ApiDeps,
  carrier: string,
  sessionId: string,
  carrierCallId: string,
  progress: DialProgress,
): Promise<{ changed: boolean; open: boolean }> {
  const session = await outboundSessionState(deps.sql, sessionId);
  const known = session?.metadata.phone_call_id;
  if (
    !session || session.direction !== "outbound" || session.metadata.phone_carrier !== carrier ||
    (typeof known === "string" && carrierCallId !== known)
  ) {
    throw new ApiError(409, "not_this_call", "The status is not for an outbound call of ours.");
  }
  let open = ["created", "connecting", "active"].includes(session.status);
  let changed = false;
  if ("state" in progress) changed = await setDialState(deps.sql, sessionId, progress.state);
  else if ("end" in progress) {
    changed = await finishSession(deps.sql, sessionId, dialEndStatus(progress.end), progress.end);
    open = false;
  }
  log.info("outbound call status", {
    session_id: sessionId,
    carrier,
    progress: "state" in progress
      ? progress.state
      : "end" in progress
      ? progress.end
      : progress.none,
    changed,
  });
  return { changed, open };
}
