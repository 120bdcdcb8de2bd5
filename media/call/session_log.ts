// The session log as the worker writes it: events are buffered and written in batches, so a
// chatty call costs one insert per flush, not one per message.
import type { Sql } from "../../db/client.ts";
import { appendEvents, type SessionEvent } from "../../db/events.ts";
import { logger } from "../../common/log.ts";

const log = logger("session-log");

export class SessionLog {
  private pending: SessionEvent[] = [];
  private timer?: ReturnType<typeof setTimeout>;
  private flushing: Promise<void> = Promise.resolve();

  constructor(private sql: Sql, private sessionId: string, private flushMs = 500) {}

  add(source: string, kind: string, data?: unknown): void {
    this.pending.push({ session_id: this.sessionId, source, kind, data, at: new Date() });
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, this.flushMs);
  }

  /** Writes what is buffered; resolves when everything added so far is stored. */
  flush(): Promise<void> {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const batch = this.pending;
    this.pending = [];
    this.flushing = this.flushing.then(() =>
      appendEvents(this.sql, batch).catch((err) =>
        log.warn("could not write session events", {
          session_id: this.sessionId,
          count: batch.length,
          cause: (err as Error).message,
        })
      )
    );
    return this.flushing;
  }
}
