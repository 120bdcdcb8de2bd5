// The session log: what happened in a call, in order, with timestamps.
import type { Sql } from "./client.ts";
import { phoneHooks } from "../common/webhooks/events.ts";
import { enqueuePhone } from "./webhook_outbox.ts";

export interface SessionEvent {
  session_id: string;
  source: string;
  kind: string;
  data?: unknown;
  at?: Date;
}

/**
 * PostgreSQL's jsonb refuses U+0000 in a string, and the whole event with it (a caller's Call-ID
 * can carry one). Such strings are stored with the NUL written out as the six characters
 * `\u0000`, so the event keeps everything else it says.
 */
export function storableJson(data: unknown): unknown {
  const json = JSON.stringify(data ?? {});
  // Only JSON's own escape of U+0000 can be one (a literal "\\u0000" text just costs a walk).
  if (!json?.includes("\\u0000")) return data;
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return v.replaceAll("\0", "\\u0000");
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === "object") {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [walk(k) as string, walk(x)]));
    }
    return v;
  };
  return walk(JSON.parse(json));
}

/** Appends to the log; a batch's transfer outcomes and key presses queue their webhooks with it. */
export async function appendEvents(sql: Sql, events: SessionEvent[]): Promise<void> {
  if (!events.length) return;
  const hooks = phoneHooks(events);
  const insert = sql`insert into session_events ${
    sql(
      events.map((e) => ({
        session_id: e.session_id,
        source: e.source,
        kind: e.kind,
        data: sql.json(storableJson(e.data ?? {}) as never),
        at: e.at ?? new Date(),
      })),
    )
  }`;
  await (hooks.length
    ? sql`with ins as (${insert} returning 1), hooked as (${enqueuePhone(sql, hooks)})
        select (select count(*) from ins), (select count(event_id) from hooked)`
    : insert);
}
