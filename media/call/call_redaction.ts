// Redaction on the worker (issue 37): the agent's categories read when the call is made, and
// applied to every session log entry and the end's turns before they are written (the brain still
// gets the caller's real words: redaction is of what is kept). docs/redaction.md.
import type { Sql } from "../../db/client.ts";
import { getAgentRedaction } from "../../db/agent_redaction.ts";
import { logger } from "../../common/log.ts";
import {
  MASKED_DIGIT,
  NO_REDACTION,
  REDACT_ALL,
  redactDeep,
  type RedactionPolicy,
} from "../../common/redaction.ts";

const log = logger("redaction");

/** How long a call's log waits for its agent's categories before it redacts all of them. */
const READ_TIMEOUT_MS = 5000;

/**
 * The agent's categories. Unreadable (the database away, too slow): every category, so a call of
 * an agent that redacts never writes what it must not (one that does not is over-redacted).
 */
export async function callRedaction(sql: Sql, agentId: string): Promise<RedactionPolicy> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const read = getAgentRedaction(sql, agentId).then((r) => new Set(r.categories));
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("timed out")), READ_TIMEOUT_MS);
    });
    return await Promise.race([read, late]);
  } catch (err) {
    log.warn("could not read the agent's redaction; redacting every category", {
      agent_id: agentId,
      cause: (err as Error).message,
    });
    return REDACT_ALL;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * One log entry's data as it may be kept: every string redacted, and with `keypad` every key
 * (`dtmf` entries, to the brain and from the line) shown as "*" whatever the brain's config says.
 */
export function redactEntry(kind: string, data: unknown, policy: RedactionPolicy): unknown {
  if (policy === NO_REDACTION || policy.size === 0) return data;
  const out = redactDeep(data, policy);
  if (
    policy.has("keypad") && kind === "dtmf" && out !== null && typeof out === "object" &&
    "digit" in out
  ) {
    return { ...out, digit: MASKED_DIGIT };
  }
  return out;
}
