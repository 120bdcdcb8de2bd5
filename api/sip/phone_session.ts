// A phone call's session, made as sessions.connect makes a browser's: the agent's input (its
// defaults, checked against what the live nodes serve), the reservation on the node connect's
// own statement chooses, and the session token for that node. For every way a phone call comes
// in: the SIP redirect server (only nodes running SIP), and the provider WebSocket adapters.
// Nothing is written when no node can take the call.
import { newId } from "../../common/ids.ts";
import { withAgentLevels } from "../connect/sensitivity.ts";
import { callSpeech } from "../../common/capabilities.ts";
import { ApiError } from "../../common/http/errors.ts";
import type { PhoneNumberRoute } from "../../db/phone_numbers.ts";
import { type ChosenNode, type NewSession, reserveSession } from "../../db/sessions.ts";
import { parseConnectBody } from "../connect/parse.ts";
import type { ApiDeps } from "../context.ts";
import { sessionToken } from "../session_token.ts";

export type PhoneSession =
  | { kind: "reserved"; session_id: string; agent_id: string; node: ChosenNode; token: string }
  /** No live node serves the agent's language, or none has room: nothing was written. */
  | { kind: "unavailable"; reason: string }
  /** The trunk or the source address has its limit of sessions not yet started: nothing written. */
  | { kind: "pending_limit"; limit: "trunk" | "source" | "key"; retryAfterSeconds: number }
  /** The admission was used before (a nonce, the carrier's call id): nothing was written. */
  | { kind: "replayed" };

export interface PhoneCallInfo {
  /** The caller's number as the carrier gave it (kept only when it is digits, with a `+`). */
  caller?: string;
  /** Only nodes that registered a SIP address and port (a call arriving over SIP). */
  sip: boolean;
  /** The provider carrying a WebSocket-streamed call, and its id of the call (its metadata). */
  carrier?: string;
  callId?: string;
  /** Keys the admission may use once (db/sessions.ts Admission.once). */
  once?: { keys: string[]; seconds: number };
  /** Caps on sessions not yet started, per trunk and per source (Admission.trunk/source). */
  trunk?: { id: string; pending: number };
  source?: { key: string; pending: number };
}

/**
 * How long the token in a 302's Contact is good for: a trunk follows a redirect at once, within
 * its INVITE transaction (Timer B, 64·T1 = 32 s, RFC 3261 section 17.1.1.2); after that nobody
 * will, and the session is ended `expired`/`redirect_not_followed` (db/sessions.ts expireUnused)
 * instead of waiting TOKEN_TTL_SECONDS in `created`.
 */
export const REDIRECT_FOLLOW_SECONDS = 32;

export async function createPhoneSession(
  deps: ApiDeps,
  route: PhoneNumberRoute,
  call: PhoneCallInfo,
): Promise<PhoneSession> {
  const metadata: Record<string, string> = { phone_dialled: route.number };
  if (call.caller && /^\+?[0-9]{3,20}$/.test(call.caller)) metadata.phone_caller = call.caller;
  if (call.carrier) metadata.phone_carrier = call.carrier;
  if (call.callId) metadata.phone_call_id = call.callId.slice(0, 256);
  let input;
  try {
    input = parseConnectBody({ agent_id: route.agent_id, metadata }, await deps.capabilities.get())
      .input;
  } catch (err) {
    if (err instanceof ApiError) {
      return { kind: "unavailable", reason: "no worker serves the agent's language" };
    }
    throw err;
  }
  const now = Date.now();
  const session: NewSession = {
    session_id: newId("ses"),
    agent_id: route.agent_id,
    workspace_id: route.workspace_id,
    key_id: null,
    token_id: newId("tok"),
    token_expires_at: new Date(
      (Math.floor(now / 1000) +
        (call.sip
          ? Math.min(deps.settings.tokenTtlSeconds, REDIRECT_FOLLOW_SECONDS)
          : deps.settings.tokenTtlSeconds)) * 1000,
    ),
    agent_input: withAgentLevels(input, route),
    display_name: input.display_name,
    metadata: input.metadata,
    record_requested: input.record,
    record_effective: input.record ?? route.record_by_default,
  };
  const reservation = await reserveSession(
    deps.reservations,
    session,
    deps.settings.nodeStaleSeconds,
    callSpeech(input.config),
    {
      holdSeconds: deps.settings.preOfferHoldSeconds,
      phone: true,
      sip: call.sip,
      once: call.once,
      trunk: call.trunk,
      source: call.source,
    },
  );
  if (reservation.kind === "replayed") return reservation;
  if (reservation.kind === "pending_limit") {
    return {
      kind: "pending_limit",
      limit: reservation.limit,
      retryAfterSeconds: reservation.retryAfterSeconds,
    };
  }
  if (reservation.kind !== "reserved") {
    return { kind: "unavailable", reason: "no worker can take the call" };
  }
  // now: the clock reading the expiry came from, so the token lives its whole TTL
  const token = await sessionToken(deps.signer, session, reservation.node.node_id, now);
  return {
    kind: "reserved",
    session_id: session.session_id,
    agent_id: session.agent_id,
    node: reservation.node,
    token,
  };
}
