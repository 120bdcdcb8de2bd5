// The last steps every call takes once its media has stopped, web or phone: the conversation
// finished (the brain told: Finalize, End), the recording closed, the end logged, the call out of
// the node's map, and its record written (endRecords retries while the database is away; the
// returned promise waits for the first attempt only, record_writer.ts).
import type { Pool } from "../../db/client.ts";
import type { Logger } from "../../common/log.ts";
import type { Conversation, ConversationOutcome } from "./conversation.ts";
import type { CallRecording } from "./recording.ts";
import { endRecords } from "./record_writer.ts";
import type { SessionLog } from "./session_log.ts";

export type EndStatus = "ended" | "failed";

export interface ClosingCall {
  sessionId: string;
  sql: Pool;
  log: SessionLog;
  conversation?: Conversation;
  recording?: CallRecording;
}

export async function closeCall(
  call: ClosingCall,
  end: { status: EndStatus; reason: string; endedAt: number },
  options: { log: Logger; leaveNode: () => void },
): Promise<void> {
  const { status, reason, endedAt } = end;
  let outcome: ConversationOutcome | undefined;
  try {
    outcome = await call.conversation?.finish(reason);
  } catch (err) {
    options.log.error("could not finish the conversation", {
      session_id: call.sessionId,
      cause: (err as Error).message,
    });
  }
  let recordingUrl: string | null = null;
  if (call.recording) {
    const seconds = await call.recording.close();
    recordingUrl = call.recording.url;
    call.log.add("worker", "recording_written", { url: recordingUrl, seconds });
  }
  call.log.add("worker", "call_ended", { status, reason });
  // The call is over: it leaves the node's map now, whatever the database does.
  options.leaveNode();
  const record = endRecords.write({
    sql: call.sql,
    sessionId: call.sessionId,
    status,
    reason,
    outcome: { ...outcome, recordingUrl },
    log: call.log,
    endedAt,
  });
  await record.firstTry;
}
