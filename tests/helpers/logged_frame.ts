// A brain-protocol frame as the session log holds it and sessions.get returns it, for tests that
// read recorded calls without making one.
import type { LoggedEvent, SessionEventKind } from "../../common/session_events.ts";

/** A frame to the brain (with its seq) or from it (with its seq and send timestamp). */
export const loggedFrame = <S extends "to_brain" | "from_brain">(
  source: S,
  kind: SessionEventKind<S>,
  body: Record<string, unknown> = {},
): LoggedEvent<string> =>
  ({
    at: "2026-01-01T00:00:00.000Z",
    source,
    kind,
    data: { seq: 1, ...(source === "from_brain" ? { timestamp_ms: 0 } : {}), ...body },
  }) as LoggedEvent<string>;
