// The session log: what happened in a call, in order, with timestamps.
import type { Sql } from "./client.ts";

export interface SessionEvent {
  session_id: string;
  source: string;
  kind: string;
  data?: unknown;
  at?: Date;
}

export async function appendEvents(sql: Sql, events: SessionEvent[]): Promise<void> {
  if (!events.length) return;
  await sql`insert into session_events ${
    sql(
      events.map((e) => ({
        session_id: e.session_id,
        source: e.source,
        kind: e.kind,
        data: sql.json((e.data ?? {}) as never),
        at: e.at ?? new Date(),
      })),
    )
  }`;
}
