// Writing to a database that may be away for a while: exponential backoff between attempts,
// which failures are worth retrying, and warnings that say "still failing" every so often
// instead of once per attempt.
import type { Logger } from "../../common/log.ts";

export interface BackoffPolicy {
  /** The wait after the first failure. */
  firstMs: number;
  /** The longest wait between two attempts. */
  maxMs: number;
  /** Each failure multiplies the wait by this (default 2). */
  factor?: number;
  /** Each wait is moved by up to this share either way (default 0.2), so writers spread out. */
  jitter?: number;
}

/** Every worker write to the database: 250 ms, 500 ms, 1 s, ... then every 8 s. */
export const DATABASE_RETRY: BackoffPolicy = { firstMs: 250, maxMs: 8000, factor: 2, jitter: 0.2 };

export class Backoff {
  #failures = 0;
  constructor(private policy: BackoffPolicy = DATABASE_RETRY, private random = Math.random) {}

  /** Failures since the last success. */
  get failures(): number {
    return this.#failures;
  }

  /** Counts a failure and returns how long to wait before the next attempt. */
  next(): number {
    const { firstMs, maxMs, factor = 2, jitter = 0.2 } = this.policy;
    const base = Math.min(maxMs, firstMs * factor ** Math.min(this.#failures, 40));
    this.#failures++;
    return Math.max(0, Math.round(base * (1 + jitter * (2 * this.random() - 1))));
  }

  reset(): void {
    this.#failures = 0;
  }
}

/** postgres.js's own codes for a connection that could not be made or was lost. */
const CLIENT_CODES = new Set([
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
]);

/** Deno's error classes for the same (a socket opened without node:net). */
const DENO_NETWORK_ERRORS = new Set([
  "ConnectionRefused",
  "ConnectionReset",
  "ConnectionAborted",
  "NotConnected",
  "BrokenPipe",
  "TimedOut",
  "Interrupted",
  "AddrNotAvailable",
]);

/**
 * Whether `err` says the database could not be reached (or could not take the statement just
 * now), so the same write may succeed later: a socket error (`ECONNREFUSED`, `ECONNRESET`, ...),
 * a lost or refused connection, or a server error of class 08 (connection), 53 (insufficient
 * resources), 57P01–57P03 (shutting down, starting up), 40001/40P01 (serialization, deadlock).
 * Anything else (a constraint, a bad value, a bug) would fail the same way again.
 */
export function isTransientDatabaseError(err: unknown): boolean {
  if (typeof err !== "object" || err === null) return false;
  const { code, name } = err as { code?: unknown; name?: unknown };
  if (typeof name === "string" && DENO_NETWORK_ERRORS.has(name)) return true;
  if (typeof code !== "string") return false;
  if (CLIENT_CODES.has(code)) return true;
  if (/^E[A-Z]+$/.test(code)) return true; // errno-style socket codes
  if (name === "PostgresError" || /^[0-9A-Z]{5}$/.test(code)) {
    return code.startsWith("08") || code.startsWith("53") || /^57P0[123]$/.test(code) ||
      code === "40001" || code === "40P01";
  }
  return false;
}

/**
 * One warning line per `everyMs` per key while something keeps failing (the first failure at
 * once, then "still failing" with the count since the last line), and one line when it works
 * again after a warning. Shared by every writer of a kind, so fifty calls retrying make two lines
 * per window, not fifty per attempt.
 */
export class WarningLimiter {
  #state = new Map<
    string,
    { lastAt: number; suppressed: number; total: number; since: number; warned: boolean }
  >();

  constructor(
    private log: Logger,
    private everyMs = 30_000,
    private now = () => performance.now(),
  ) {}

  failed(key: string, msg: string, fields: Record<string, string | number | undefined> = {}) {
    const now = this.now();
    let s = this.#state.get(key);
    if (!s) {
      s = { lastAt: -Infinity, suppressed: 0, total: 0, since: now, warned: false };
      this.#state.set(key, s);
    }
    s.total++;
    if (now - s.lastAt < this.everyMs) {
      s.suppressed++;
      return;
    }
    const repeated = s.warned ? { failures_since_last_warning: s.suppressed + 1 } : {};
    this.log.warn(s.warned ? `${msg} (still failing)` : msg, {
      ...fields,
      ...repeated,
      failing_for_ms: Math.round(now - s.since),
    });
    s.lastAt = now;
    s.suppressed = 0;
    s.warned = true;
  }

  succeeded(key: string, msg: string, fields: Record<string, string | number | undefined> = {}) {
    const s = this.#state.get(key);
    if (!s) return;
    this.#state.delete(key);
    this.log.info(msg, {
      ...fields,
      failed_attempts: s.total,
      failing_for_ms: Math.round(this.now() - s.since),
    });
  }
}

/** Resolves after `ms`, or at once when `signal` aborts; never rejects. */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** `promise`'s value, or `fallback` when it has not settled within `ms` (the timer is cleared). */
export async function within<T, F>(promise: Promise<T>, ms: number, fallback: F): Promise<T | F> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<F>((resolve) => (timer = setTimeout(() => resolve(fallback), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
