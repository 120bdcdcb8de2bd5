// The first steps every call takes once it starts, web or phone: the session becomes active (the
// database being away must not stop a call: its end is written when it returns), and a recording
// is opened if the session records.
import type { Pool } from "../../db/client.ts";
import { markActive } from "../../db/sessions.ts";
import type { Logger } from "../../common/log.ts";
import { CallRecording } from "./recording.ts";

/** Marks the session active; says whether it records (false when the database is away). */
export async function activateSession(
  sql: Pool,
  sessionId: string,
  log: Logger,
): Promise<{ record: boolean } | undefined> {
  const active = await markActive(sql, sessionId).catch((err) => {
    log.warn("could not mark the session active; the call goes on, unrecorded", {
      session_id: sessionId,
      cause: (err as Error).message,
    });
    return { record: false };
  });
  if (!active) log.warn("session was not connecting at call start", { session_id: sessionId });
  return active;
}

/** The call's recording when its session records, in `dir` (default data/recordings). */
export function recordingOf(
  active: { record: boolean } | undefined,
  sessionId: string,
  dir = "data/recordings",
): CallRecording | undefined {
  return active?.record ? new CallRecording(`${dir}/${sessionId}.wav`) : undefined;
}
