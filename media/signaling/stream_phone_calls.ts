// Runs the phone calls the telephony stream route admits (telephony_stream.ts): a PhoneCall (the
// conversation with the brain, the record, the recording) over the provider's stream line, kept
// in the node's phone calls by session id until it ends.
import type { Pool } from "../../db/client.ts";
import { getAgent } from "../../db/agents.ts";
import { logger } from "../../common/log.ts";
import type { CallEngines } from "../engines/call_engines.ts";
import type { EndOfTurnMode } from "../turn/turn_taking.ts";
import { PhoneCall } from "../call/phone_call.ts";
import type { AdmittedPhoneCall } from "./telephony_stream.ts";

const log = logger("telephony-stream");

export interface StreamPhoneNode {
  sql: Pool;
  engines?: CallEngines;
  recordingsDir?: string;
  endOfTurn?: EndOfTurnMode;
  /** Phone calls on this node by session id: a new one is added, an ended one removes itself. */
  phoneCalls: Map<string, PhoneCall>;
}

export function streamPhoneCalls(w: StreamPhoneNode): (call: AdmittedPhoneCall) => void {
  return ({ sessionId, line, claims }) => {
    void (async () => {
      const agent = await getAgent(w.sql, claims.sub);
      const call = new PhoneCall(line, {
        sessionId,
        tokenId: claims.jti,
        agentId: claims.sub,
        brainUrl: agent?.brain_url ?? "",
        input: claims.input as { init?: unknown; config?: unknown } | null,
        engines: w.engines,
        recordingsDir: w.recordingsDir,
        sql: w.sql,
        endOfTurn: w.endOfTurn,
        onEnded: (ended) => {
          if (w.phoneCalls.get(sessionId) === ended) w.phoneCalls.delete(sessionId);
        },
      });
      w.phoneCalls.set(sessionId, call);
      try {
        await call.start();
      } catch (err) {
        log.error("phone call failed to start", {
          session_id: sessionId,
          cause: (err as Error).message,
        });
        await call.end("failed", "start_failed");
      }
    })();
  };
}
