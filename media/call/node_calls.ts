// A call joining the node, whatever its line (a page's offer, SIP, a carrier's stream): made from
// the session its token admitted, added to the node's calls (so it is counted, drained and shown
// at /healthz), and opened: it starts when its line is ready.
import type { SessionClaims } from "../../common/token.ts";
import type { CallLine } from "./line.ts";
import { Call, type CallOptions } from "./call.ts";
import type { SessionLog } from "./session_log.ts";

/** What a call needs of the node (the worker's context has all of it). */
export interface CallNode
  extends Pick<CallOptions, "sql" | "engines" | "recordingsDir" | "endOfTurn"> {
  calls: Map<string, unknown>;
}

export interface AdmittedSession {
  /** The session token's claims, its token already spent (markConnecting). */
  claims: SessionClaims;
  brainUrl: string;
  /** The session's log, holding what the line logged before the call (the INVITE, the offer). */
  log: SessionLog;
}

/** Makes, registers and opens the call; `onEnded` runs once it has left the node's map. */
export function startCall(
  node: CallNode,
  line: CallLine,
  session: AdmittedSession,
  onEnded?: (call: Call) => void,
): Call {
  const { claims } = session;
  const call = new Call(line, {
    sessionId: claims.sid,
    tokenId: claims.jti,
    agentId: claims.sub,
    brainUrl: session.brainUrl,
    input: claims.input as CallOptions["input"],
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
  call.open();
  return call;
}
