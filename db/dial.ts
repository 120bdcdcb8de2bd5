// An outbound session's dial state (common/dial.ts): the worker moves it forward as the SIP
// dialog goes (INVITE sent, 180/183, 200); it never moves back, and an ended session keeps it.
import type { Sql } from "./client.ts";
import type { DialState } from "../common/dial.ts";
import { textArray } from "./text_array.ts";

const ORDER: Record<DialState, number> = { dialing: 0, ringing: 1, answered: 2 };

/** Moves an open outbound session's dial state forward; false when it was there or further. */
export async function setDialState(
  sql: Sql,
  sessionId: string,
  state: DialState,
): Promise<boolean> {
  const earlier = (Object.keys(ORDER) as DialState[]).filter((s) => ORDER[s] < ORDER[state]);
  const rows = await sql`
    update sessions set dial_state = ${state}
    where id = ${sessionId} and direction = 'outbound'
      and status in ('created', 'connecting', 'active')
      and (dial_state is null or dial_state = any(${textArray(sql, earlier)}))
    returning id`;
  return rows.length === 1;
}
