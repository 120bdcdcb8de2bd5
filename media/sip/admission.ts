// Which INVITEs this worker takes: those whose Request-URI carries `;session=TOKEN`, a session
// token the control plane minted for this node when it redirected the trunk here (its 302's
// Contact). The token is checked exactly as the offer endpoint checks it (media/signaling/
// offer.ts: signature, this node, not expired, the session still waiting for it), and spent
// atomically (markConnecting) only once the offer is known to be answerable: a refused INVITE
// writes nothing. Refusals: 404 when there is no session to speak of, 403 for a token that is
// real but not for this call now, 503 with Retry-After when the node is full or draining.
import { markConnecting, sessionTokenState } from "../../db/sessions.ts";
import { getSession } from "../../db/session_records.ts";
import type { Pool } from "../../db/client.ts";
import { type SessionClaims, TokenError, type TokenVerifier } from "../../common/token.ts";
import { refusalFor } from "../signaling/offer.ts";
import { parseParams } from "../../sip/headers.ts";
import type { SipRefusal } from "./uas_types.ts";

export interface SipAdmissionNode {
  sql: Pool;
  nodeId: string;
  verifier: TokenVerifier;
  /** Sessions with a call on this node now (web or phone). */
  calls: Map<string, unknown>;
  draining?: boolean;
}

/** Seconds a trunk is asked to wait before trying a full node again (offer.ts's figure). */
const RETRY_AFTER_SECONDS = 2;

const noSession = (): SipRefusal => ({ refuse: 404, reason: "Not Found (No such session)" });
const forbidden = (why: string): SipRefusal => ({ refuse: 403, reason: `Forbidden (${why})` });
const full = (why: string): SipRefusal => ({
  refuse: 503,
  reason: `Service Unavailable (${why})`,
  headers: [{ name: "Retry-After", value: String(RETRY_AFTER_SECONDS) }],
});

/** The `session` parameter of a sip:/sips: Request-URI, or undefined. */
export function sessionToken(uri: string): string | undefined {
  const m = /^sips?:[^;?]*((?:;[^?]*)?)/i.exec(uri);
  const token = m ? parseParams(m[1]).get("session") : undefined;
  return token || undefined;
}

/** The token's claims when it may start a call here now; otherwise the INVITE's refusal. */
export async function admitInvite(
  node: SipAdmissionNode,
  uri: string,
): Promise<SessionClaims | SipRefusal> {
  if (node.draining) return full("this worker is draining");
  const token = sessionToken(uri);
  if (!token) return noSession();
  let claims: SessionClaims;
  try {
    claims = await node.verifier.verify(token, node.nodeId);
  } catch (err) {
    if (!(err instanceof TokenError)) throw err;
    if (err.reason === "invalid_token") return noSession();
    return forbidden(err.message.replace(/\.$/, ""));
  }
  // A provider stream's token (api/sip/phone_session.ts puts its carrier in the metadata) is for
  // that provider's route, as the stream route refuses a SIP session's token (wrong_carrier).
  const carrier = (claims.input as { metadata?: Record<string, string> } | null)?.metadata
    ?.phone_carrier;
  if (carrier !== undefined && carrier !== "sip") {
    return forbidden("This session was not opened for a SIP call");
  }
  if (node.calls.has(claims.sid)) {
    return forbidden("This session token has already started a call");
  }
  const state = await sessionTokenState(node.sql, claims.sid);
  const refusal = refusalFor(state, claims, node.nodeId);
  if (refusal) {
    return refusal.status === 404 ? noSession() : forbidden(refusal.message.replace(/\.$/, ""));
  }
  if (!state!.holds_slot && !state!.node_has_room) return full("this worker is full");
  return claims;
}

/** Spends the token for this call (atomically, as the offer endpoint does); a refusal if it cannot. */
export async function takeSession(
  node: SipAdmissionNode,
  claims: SessionClaims,
): Promise<SipRefusal | undefined> {
  const taken = await markConnecting(node.sql, claims.sid, claims.jti, node.nodeId);
  if (taken === "connected") return undefined;
  if (taken === "node_full") return full("this worker is full");
  // Taken or ended since the check.
  const record = await getSession(node.sql, claims.sid);
  if (!record) return noSession();
  if (record.status === "expired") return forbidden("The session token has expired");
  return forbidden("This session token has already started a call");
}

export const isRefusal = (v: SessionClaims | SipRefusal): v is SipRefusal => "refuse" in v;
