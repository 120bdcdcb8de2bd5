// Runs the phone calls the telephony stream route admits (telephony_stream.ts): the stream line
// joins the node as every call does (media/call/node_calls.ts startCall: a Call over the line in
// the node's calls map, counted, drained and shown at /healthz), with the agent's brain.
import { getAgent } from "../../db/agents.ts";
import { type CallNode, startCall } from "../call/node_calls.ts";
import { SessionLog } from "../call/session_log.ts";
import type { AdmittedPhoneCall } from "./telephony_stream.ts";

export function streamPhoneCalls(node: CallNode): (call: AdmittedPhoneCall) => void {
  return ({ line, claims }) => {
    void getAgent(node.sql, claims.sub).then((agent) => {
      startCall(node, line, {
        claims,
        brainUrl: agent?.brain_url ?? "",
        log: new SessionLog(node.sql, claims.sid),
      });
    });
  };
}
