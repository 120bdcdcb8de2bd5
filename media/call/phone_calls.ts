// A phone call joining the node: made over its line from the session its token admitted, added to
// the node's calls (so it is counted, drained and shown at /healthz as a web call is), and
// started. Any carrier's admission ends here: SIP (media/sip/phone_service.ts) and the telephony
// providers' WebSocket streams alike.
import type { SessionClaims } from "../../common/token.ts";
import { logger } from "../../common/log.ts";
import type { PhoneLine } from "../phone/line.ts";
import { PhoneCall, type PhoneCallOptions } from "./phone_call.ts";
import type { SessionLog } from "./session_log.ts";

const log = logger("phone-call");

/** What a phone call needs of the node (the worker's context has all of it). */
export interface PhoneNode
  extends Pick<PhoneCallOptions, "sql" | "engines" | "recordingsDir" | "endOfTurn"> {
  calls: Map<string, unknown>;
}

export interface AdmittedSession {
  /** The session token's claims, its token already spent (markConnecting). */
  claims: SessionClaims;
  brainUrl: string;
  /** The session's log, holding what the carrier logged before the call (e.g. the INVITE). */
  log: SessionLog;
}

/** Makes, registers and starts the call; `onEnded` runs once it has left the node's map. */
export function startPhoneCall(
  node: PhoneNode,
  line: PhoneLine,
  session: AdmittedSession,
  onEnded?: (call: PhoneCall) => void,
): PhoneCall {
  const { claims } = session;
  const call = new PhoneCall(line, {
    sessionId: claims.sid,
    tokenId: claims.jti,
    agentId: claims.sub,
    brainUrl: session.brainUrl,
    input: claims.input as PhoneCallOptions["input"],
    engines: node.engines,
    recordingsDir: node.recordingsDir,
    endOfTurn: node.endOfTurn,
    sql: node.sql,
    log: session.log,
    onEnded: (ended) => {
      if (node.calls.get(ended.sessionId) === ended) node.calls.delete(ended.sessionId);
      onEnded?.(ended);
    },
  });
  node.calls.set(call.sessionId, call);
  call.start().catch((err) => {
    log.error("phone call failed to start", { session_id: call.sessionId, error: String(err) });
    void call.end("failed", "start_failed");
  });
  return call;
}
