// The session log as the worker writes it: events are buffered and written in batches, so a
// chatty call costs one insert per flush, not one per message.
//
// The database may be away while the call goes on. The events then stay in memory, in order, and
// are written when it answers again (retried with backoff, DATABASE_RETRY: 250 ms doubling to
// 8 s); one warning line per 30 s for all calls says the writes are failing, one line says when
// they work again. The buffer is bounded per call (DEFAULT_LOG_CAP: 10,000 events or 2 MiB of
// event JSON): past that, the oldest page-channel events (sources `page` and `to_page`, the RTVI
// chatter the turn record repeats) are dropped first, and only when none is left the oldest of the
// others. Dropped events are not silent: one `worker`/`log_events_dropped` event takes the place of
// the first one dropped, with the count by source and the time span. A write the database refuses
// for its content (not its reachability) is split until the offending event is alone, which is
// then left out (counted as `rejected`) so that one bad value cannot hold back the rest.
import type { Sql } from "../../db/client.ts";
import { appendEvents, type SessionEvent } from "../../db/events.ts";
import { logger } from "../../common/log.ts";
import { NO_REDACTION, redact, type RedactionPolicy } from "../../common/redaction.ts";
import { redactEntry } from "./call_redaction.ts";
import type {
  SessionEventData,
  SessionEventKind,
  SessionEventWriter,
  SessionSource,
} from "../../common/session_events.ts";
import {
  Backoff,
  type BackoffPolicy,
  DATABASE_RETRY,
  isTransientDatabaseError,
  WarningLimiter,
} from "./retry.ts";

const log = logger("session-log");
const warnings = new WarningLimiter(log);

/** How much of a call's log may wait in memory for the database. */
export interface LogCap {
  events: number;
  /** Estimated as the length of the event's JSON. */
  bytes: number;
}

export const DEFAULT_LOG_CAP: LogCap = { events: 10_000, bytes: 2 * 1024 * 1024 };

/** Events per insert (5 parameters each, far under PostgreSQL's 65,535). */
const BATCH = 1000;

/** Sources dropped first when the buffer is full: the page channel, repeated in the turn record. */
const DROPPED_FIRST = new Set(["page", "to_page"]);

interface Entry {
  event: SessionEvent;
  bytes: number;
  /** Set on the `log_events_dropped` entry. */
  drops?: Drops;
}

interface Drops {
  count: number;
  by_source: Record<string, number>;
  first_at: Date;
  last_at: Date;
}

export interface SessionLogOptions {
  cap?: Partial<LogCap>;
  retry?: BackoffPolicy;
  /** Writes a batch; appendEvents on the log's database by default (tests replace it). */
  write?: (events: SessionEvent[]) => Promise<void>;
}

export class SessionLog implements SessionEventWriter {
  #queue: Entry[] = [];
  #bytes = 0;
  /** How many entries at the head of the queue are being written now (never dropped). */
  #inFlight = 0;
  #batch = BATCH;
  /** The `log_events_dropped` entry still in the queue that new drops are counted in. */
  #marker?: Entry;
  #flushTimer?: ReturnType<typeof setTimeout>;
  #retryTimer?: ReturnType<typeof setTimeout>;
  #pass?: Promise<boolean>;
  #closed = false;
  #backoff: Backoff;
  #cap: LogCap;
  #write: (events: SessionEvent[]) => Promise<void>;
  #dropped = 0;
  #rejected = 0;
  /** The agent's redaction (issue 37); writes wait for it once redactWith was called. */
  #policy: RedactionPolicy = NO_REDACTION;
  #policyRead?: Promise<void>;

  constructor(
    sql: Sql,
    private sessionId: string,
    private flushMs = 500,
    options: SessionLogOptions = {},
  ) {
    this.#cap = { ...DEFAULT_LOG_CAP, ...options.cap };
    this.#backoff = new Backoff(options.retry ?? DATABASE_RETRY);
    this.#write = options.write ?? ((events) => appendEvents(sql, events));
  }

  /** Events not written yet (the drop marker included). */
  get pending(): number {
    return this.#queue.length;
  }

  /** Events left out because the buffer was full, and because the database refused them. */
  get lost(): { dropped: number; rejected: number } {
    return { dropped: this.#dropped, rejected: this.#rejected };
  }

  /**
   * Redacts every event by `policy` before it is written: those added until it is known are
   * redacted when it comes, and nothing is written before then.
   */
  redactWith(policy: Promise<RedactionPolicy>): void {
    this.#policyRead = policy.then((p) => {
      this.#policy = p;
      for (const { event } of this.#queue) event.data = redactEntry(event.kind, event.data, p);
    });
  }

  /** The redaction in effect, once redactWith's policy is known (none without redactWith). */
  async redaction(): Promise<RedactionPolicy> {
    await this.#policyRead;
    return this.#policy;
  }

  /** `text` as the call may keep it now: for a worker log line that quotes what a peer sent. */
  kept(text: string): string {
    return redact(text, this.#policy);
  }

  /** One event, of a kind common/session_events.ts declares, with its data. */
  add<S extends SessionSource, K extends SessionEventKind<S>>(
    source: S,
    kind: K,
    data: SessionEventData<S, K>,
  ): void {
    const kept = redactEntry(kind, data, this.#policy);
    const event: SessionEvent = {
      session_id: this.sessionId,
      source,
      kind,
      data: kept,
      at: new Date(),
    };
    const entry = { event, bytes: estimate(event) };
    this.#queue.push(entry);
    this.#bytes += entry.bytes;
    if (this.#queue.length > this.#cap.events || this.#bytes > this.#cap.bytes) this.#trim();
    if (this.#closed || this.#pass || this.#retryTimer !== undefined) return;
    this.#flushTimer ??= setTimeout(() => {
      this.#flushTimer = undefined;
      this.flush();
    }, this.flushMs);
  }

  /**
   * Writes what is buffered now. Resolves true once everything added before the call is stored;
   * false when the database could not be reached (the events stay buffered and are retried in
   * the background with backoff). Never rejects.
   */
  async flush(): Promise<boolean> {
    const last = this.#queue.at(-1);
    if (this.#flushTimer !== undefined) {
      clearTimeout(this.#flushTimer);
      this.#flushTimer = undefined;
    }
    for (;;) {
      if (!last || !this.#queue.includes(last)) return true;
      if (this.#pass) {
        if (!await this.#pass) return false;
        continue;
      }
      if (this.#retryTimer !== undefined) {
        clearTimeout(this.#retryTimer);
        this.#retryTimer = undefined;
      }
      this.#pass = this.#run().finally(() => (this.#pass = undefined));
    }
  }

  /** Stops retrying (the process is going away); returns how many events were never written. */
  close(): number {
    this.#closed = true;
    clearTimeout(this.#flushTimer);
    clearTimeout(this.#retryTimer);
    this.#flushTimer = this.#retryTimer = undefined;
    return this.#queue.length;
  }

  /** Writes batches until the queue is empty (true) or the database is unreachable (false). */
  async #run(): Promise<boolean> {
    if (this.#policyRead) await this.#policyRead;
    while (this.#queue.length) {
      const entries = this.#queue.slice(0, this.#batch);
      this.#inFlight = entries.length;
      if (this.#marker && entries.includes(this.#marker)) this.#marker = undefined;
      let failure: unknown;
      try {
        await this.#write(entries.map(finalEvent));
      } catch (err) {
        failure = err ?? new Error("unknown failure");
      } finally {
        this.#inFlight = 0;
      }
      if (failure === undefined) {
        this.#queue.splice(0, entries.length);
        for (const e of entries) this.#bytes -= e.bytes;
        if (this.#backoff.failures) {
          warnings.succeeded("write", "session events written again", {
            session_id: this.sessionId,
          });
        }
        this.#backoff.reset();
        continue;
      }
      if (isTransientDatabaseError(failure)) {
        warnings.failed("write", "could not write session events; keeping them to retry", {
          session_id: this.sessionId,
          buffered: this.#queue.length,
          cause: (failure as Error).message,
        });
        const wait = this.#backoff.next();
        if (!this.#closed) {
          this.#retryTimer = setTimeout(() => {
            this.#retryTimer = undefined;
            this.flush();
          }, wait);
        }
        return false;
      }
      // The database refused the content: find the event it refuses and leave it out.
      if (entries.length > 1) {
        this.#batch = Math.max(1, Math.floor(entries.length / 2));
        continue;
      }
      const [bad] = this.#queue.splice(0, 1);
      this.#bytes -= bad.bytes;
      this.#rejected++;
      log.warn("a session event was refused by the database and is left out", {
        session_id: this.sessionId,
        source: bad.event.source,
        kind: bad.event.kind,
        cause: (failure as Error).message,
      });
    }
    this.#batch = BATCH;
    return true;
  }

  /** Drops the oldest droppable entries until the buffer is under its cap again. */
  #trim(): void {
    while (this.#queue.length > this.#cap.events || this.#bytes > this.#cap.bytes) {
      let i = this.#oldest((e) => !e.drops && DROPPED_FIRST.has(e.event.source));
      if (i < 0) i = this.#oldest((e) => !e.drops);
      if (i < 0) return;
      const [gone] = this.#queue.splice(i, 1);
      this.#bytes -= gone.bytes;
      this.#dropped++;
      const at = gone.event.at ?? new Date();
      if (!this.#marker) {
        const drops: Drops = { count: 0, by_source: {}, first_at: at, last_at: at };
        this.#marker = {
          event: {
            session_id: this.sessionId,
            source: "worker",
            kind: "log_events_dropped",
            at,
            data: drops,
          },
          bytes: 200,
          drops,
        };
        this.#queue.splice(i, 0, this.#marker);
        this.#bytes += this.#marker.bytes;
      }
      const d = this.#marker.drops!;
      d.count++;
      d.by_source[gone.event.source] = (d.by_source[gone.event.source] ?? 0) + 1;
      if (at < d.first_at) d.first_at = at;
      if (at > d.last_at) d.last_at = at;
    }
  }

  /** Index of the oldest entry not being written that matches, or -1. */
  #oldest(match: (e: Entry) => boolean): number {
    for (let i = this.#inFlight; i < this.#queue.length; i++) {
      if (match(this.#queue[i])) return i;
    }
    return -1;
  }
}

/** The event as written (a drop marker's counts as they are when it is written). */
function finalEvent(e: Entry): SessionEvent {
  return e.drops
    ? { ...e.event, data: { ...e.drops, by_source: { ...e.drops.by_source } } }
    : e.event;
}

function estimate(e: SessionEvent): number {
  let data = 2;
  try {
    data = JSON.stringify(e.data ?? {})?.length ?? 2;
  } catch {
    data = 256; // unserialisable: the write will refuse it and leave it out
  }
  return data + e.source.length + e.kind.length + 64;
}
