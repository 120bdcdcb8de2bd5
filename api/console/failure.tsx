// Why a failed session failed, from the worker's own log entry for its end reason: the detail
// (the error the worker met) and, for a brain failure, the brain URL it dialled, which may no
// longer be the agent's. Without this the operator had to find the entry in the raw log.
import type { FC } from "hono/jsx";
import type { SessionRecord } from "../../db/session_records.ts";
import { isFailureEvent } from "../../common/session_events.ts";

/** What to check, for the reasons whose cause the operator can fix from here. */
const WHAT_TO_DO: Record<string, string> = {
  brain_unreachable:
    "Check that the brain is running at this URL and that the worker's node can reach it.",
  brain_connect_timeout:
    "The brain accepted the connection but did not finish the WebSocket handshake in time: " +
    "check that this URL is the brain's WebSocket route.",
};

export interface FailureView {
  reason: string;
  detail?: string;
  brainUrl?: string;
  /** When the worker logged it. */
  at?: Date;
}

/** The failure of a failed session, or undefined for any other. */
export function readFailure(s: Pick<SessionRecord, "status" | "end_reason" | "log">):
  | FailureView
  | undefined {
  if (s.status !== "failed" || !s.end_reason) return undefined;
  const found = s.log.filter(isFailureEvent).findLast((e) => e.kind === s.end_reason);
  // Records written before the detail was logged have none: checked, not trusted.
  const data: { detail?: unknown; brain_url?: unknown } = found?.data ?? {};
  return {
    reason: s.end_reason,
    ...(typeof data.detail === "string" ? { detail: data.detail } : {}),
    ...(typeof data.brain_url === "string" ? { brainUrl: data.brain_url } : {}),
    ...(found ? { at: found.at } : {}),
  };
}

export const Failure: FC<{ failure: FailureView }> = ({ failure }) => (
  <div class="notice error" id="failure">
    <dl class="facts">
      <dt>Reason</dt>
      <dd class="mono">{failure.reason}</dd>
      <dt>Detail</dt>
      <dd>{failure.detail ?? <span class="muted">The worker logged no detail.</span>}</dd>
      {failure.brainUrl !== undefined && (
        <>
          <dt>Brain URL dialled</dt>
          <dd class="mono" id="failed-brain-url">{failure.brainUrl}</dd>
        </>
      )}
    </dl>
    {WHAT_TO_DO[failure.reason] && <p class="small">{WHAT_TO_DO[failure.reason]}</p>}
  </div>
);
