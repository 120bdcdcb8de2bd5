// The end of a call's record (status, end reason, turns, usage, recording URL) and the rest of
// its session log, written after the call itself is over, and retried while the database is away.
//
// The call has already let its caller go and given back its resources when its end is handed
// here; only the write waits. Each attempt writes the buffered log, then the end (finishSession),
// so a record that says `ended` has its whole log. An attempt the database cannot take is retried
// with backoff (DATABASE_RETRY, at most every 8 s) for as long as the process lives, with one
// warning line per 30 s for all calls. When the worker stops, `settle` gives the pending ends one
// last bounded try (retrying every 250 ms) and logs, per call, what could not be written.
//
// The call seconds are the call's own: the end carries how long ago the call ended on this
// worker's monotonic clock (`endedSecondsAgo`), so a write delayed by an outage does not bill the
// outage (db/sessions.ts finishSession subtracts it from now()).
//
// When finishSession finds the session already ended, the API has failed it `worker_lost` (the
// worker's heartbeat was stale longer than NODE_STALE_SECONDS) or it was ended otherwise: the
// record keeps what it says, and the log gets a `worker`/`end_not_recorded` event with the
// worker's own end (status, reason, usage) and what the record says instead.
import type { Sql } from "../../db/client.ts";
import { type CallOutcome, finishSession } from "../../db/sessions.ts";
import { getSession } from "../../db/session_records.ts";
import { logger } from "../../common/log.ts";
import type { SessionLog } from "./session_log.ts";
import {
  Backoff,
  type BackoffPolicy,
  DATABASE_RETRY,
  isTransientDatabaseError,
  pause,
  WarningLimiter,
  within,
} from "./retry.ts";

const log = logger("call-record");

/** What the end of one call writes. */
export interface EndRecord {
  sql: Sql;
  sessionId: string;
  status: "ended" | "failed";
  reason: string;
  outcome: CallOutcome;
  /** The call's log: flushed before the end is written. */
  log: SessionLog;
  /** performance.now() when the call ended (default: when it is handed over). */
  endedAt?: number;
}

/**
 * `written`: the record says this end. `already_ended`: the session had ended before (the record
 * keeps that; the log says so). `refused`: the database refused the write for its content.
 * `abandoned`: the process stopped before the database came back.
 */
export type EndResult = "written" | "already_ended" | "refused" | "abandoned";

export interface EndWrite {
  /** Settles after the first attempt, or after `firstTryWaitMs` if that attempt hangs. */
  firstTry: Promise<void>;
  /** Settles with the final result; never rejects. */
  done: Promise<EndResult>;
}

/** finishSession's shape, with how long ago the call ended. */
export type FinishFn = (
  sql: Sql,
  sessionId: string,
  status: "ended" | "failed",
  reason: string,
  outcome: CallOutcome & { endedSecondsAgo?: number },
) => Promise<boolean>;

export interface EndRecordsOptions {
  finish?: FinishFn;
  /** Reads what the record says when finishSession found it ended (getSession by default). */
  readStatus?: (sql: Sql, sessionId: string) => Promise<[string, string | null] | undefined>;
  retry?: BackoffPolicy;
  /** How long `firstTry` waits for a first attempt that hangs. */
  firstTryWaitMs?: number;
}

interface Pending {
  record: EndRecord;
  endedAt: number;
  phase: "log" | "finish" | "note";
  attempts: number;
  /** finishSession was sent at least once (it may have committed without an answer). */
  finishSent: boolean;
  /** Aborted to cut the current backoff wait short (a settle). */
  wake: AbortController;
  hurry: boolean;
  abandoned: boolean;
  done: Promise<EndResult>;
}

export class EndRecords {
  #pending = new Set<Pending>();
  #finish: FinishFn;
  #readStatus: NonNullable<EndRecordsOptions["readStatus"]>;
  #retry: BackoffPolicy;
  #firstTryWaitMs: number;
  #warnings = new WarningLimiter(log);

  constructor(options: EndRecordsOptions = {}) {
    this.#finish = options.finish ?? finishSession;
    this.#readStatus = options.readStatus ?? (async (sql, id) => {
      const s = await getSession(sql, id);
      return s ? [s.status, s.end_reason] : undefined;
    });
    this.#retry = options.retry ?? DATABASE_RETRY;
    this.#firstTryWaitMs = options.firstTryWaitMs ?? 3000;
  }

  /** Ends whose write is still being tried. */
  get pending(): number {
    return this.#pending.size;
  }

  /** Starts writing `record`; retries in the background until written or settled. */
  write(record: EndRecord): EndWrite {
    let firstDone!: () => void;
    const first = new Promise<void>((r) => (firstDone = r));
    const p: Pending = {
      record,
      endedAt: record.endedAt ?? performance.now(),
      phase: "log",
      attempts: 0,
      finishSent: false,
      wake: new AbortController(),
      hurry: false,
      abandoned: false,
      done: Promise.resolve("written"),
    };
    this.#pending.add(p);
    p.done = this.#run(p, firstDone).catch((err) => {
      log.error("the end of the call could not be written", {
        session_id: record.sessionId,
        cause: (err as Error)?.message,
      });
      return "refused" as const;
    }).finally(() => {
      firstDone();
      this.#pending.delete(p);
    });
    return { firstTry: within(first, this.#firstTryWaitMs, undefined), done: p.done };
  }

  /**
   * The worker is stopping: tries every pending end again now and every 250 ms until `timeoutMs`
   * has passed, then gives up on what is left (logged per call, with its end, for an operator).
   */
  async settle(timeoutMs = 5000): Promise<{ settled: number; abandoned: number }> {
    const all = [...this.#pending];
    if (!all.length) return { settled: 0, abandoned: 0 };
    log.info("trying the call ends still waiting for the database before stopping", {
      pending_ends: all.length,
      timeout_ms: timeoutMs,
    });
    for (const p of all) {
      p.hurry = true;
      p.wake.abort();
    }
    const results = await within(Promise.all(all.map((p) => p.done)), timeoutMs, undefined);
    if (results) return { settled: results.length, abandoned: 0 };
    let abandoned = 0;
    for (const p of all) {
      if (!this.#pending.has(p)) continue;
      p.abandoned = true;
      p.wake.abort();
      abandoned++;
      const unwritten = p.record.log.close();
      this.#pending.delete(p);
      log.error("the database did not come back before the worker stopped: end not recorded", {
        session_id: p.record.sessionId,
        status: p.record.status,
        reason: p.record.reason,
        ended_seconds_ago: Math.round((performance.now() - p.endedAt) / 1000),
        unwritten_log_events: unwritten,
      });
    }
    return { settled: all.length - abandoned, abandoned };
  }

  async #run(p: Pending, firstDone: () => void): Promise<EndResult> {
    const backoff = new Backoff(this.#retry);
    const { sessionId } = p.record;
    for (;;) {
      let result: EndResult | "retry";
      let cause = "";
      try {
        result = await this.#attempt(p);
      } catch (err) {
        if (!isTransientDatabaseError(err)) {
          log.error("the database refused the end of the call", {
            session_id: sessionId,
            cause: (err as Error)?.message,
          });
          return "refused";
        }
        result = "retry";
        cause = (err as Error).message;
      }
      p.attempts++;
      firstDone();
      if (p.abandoned) return "abandoned";
      if (result !== "retry") {
        if (p.attempts > 1) {
          this.#warnings.succeeded("end", "call ends written again", { session_id: sessionId });
        }
        return result;
      }
      this.#warnings.failed("end", "could not write the end of a call; retrying", {
        session_id: sessionId,
        pending_ends: this.#pending.size,
        cause: cause || "the session log could not be written",
      });
      const wait = p.hurry ? 250 : backoff.next();
      p.wake = new AbortController();
      await pause(wait, p.wake.signal);
      if (p.abandoned) return "abandoned";
    }
  }

  /** One attempt: the log, then the end, then (if the end was not ours to write) a note. */
  async #attempt(p: Pending): Promise<EndResult | "retry"> {
    const r = p.record;
    if (p.phase === "log") {
      if (!await r.log.flush()) return "retry";
      p.phase = "finish";
    }
    if (p.phase === "finish") {
      const endedSecondsAgo = Math.max(0, (performance.now() - p.endedAt) / 1000);
      const retried = p.finishSent;
      p.finishSent = true;
      const finished = await this.#finish(r.sql, r.sessionId, r.status, r.reason, {
        ...r.outcome,
        endedSecondsAgo,
      });
      if (finished) return "written";
      // Not live any more. A retry after a write that committed unseen finds its own end.
      const found = await this.#readStatus(r.sql, r.sessionId);
      if (found && found[0] === r.status && found[1] === r.reason && retried) {
        return "written";
      }
      r.log.add("worker", "end_not_recorded", {
        status: r.status,
        reason: r.reason,
        recorded_status: found?.[0] ?? null,
        recorded_reason: found?.[1] ?? null,
        ended_seconds_ago: Math.round(endedSecondsAgo * 10) / 10,
        recognised_seconds: r.outcome.recognisedSeconds ?? 0,
        synthesized_characters: r.outcome.synthesizedCharacters ?? 0,
        by_engine: r.outcome.byEngine ?? {},
        recording_url: r.outcome.recordingUrl ?? null,
      });
      log.warn("the session had already ended; the worker's end is only in its log", {
        session_id: r.sessionId,
        status: r.status,
        reason: r.reason,
        recorded_status: found?.[0],
        recorded_reason: found?.[1] ?? undefined,
      });
      p.phase = "note";
    }
    return await r.log.flush() ? "already_ended" : "retry";
  }
}

/** The worker's pending call ends (one process, one set). */
export const endRecords = new EndRecords();

/**
 * The worker is stopping: the last bounded try for call ends still waiting for the database.
 * registration.stop() runs it before the node's last heartbeat.
 */
export function settlePendingEnds(timeoutMs = 5000) {
  return endRecords.settle(timeoutMs);
}
