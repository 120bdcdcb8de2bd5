// The webhook dispatcher: every API process runs one (api/service.ts), like the campaign
// scheduler. Each pass claims due deliveries (db/webhook_delivery.ts), signs each body as the
// Standard Webhooks spec says, POSTs it with a bounded time and a bounded read of the reply, logs
// the attempt, and either marks it delivered (any 2xx) or schedules the next try (backoff with full
// jitter, common/webhooks/retry.ts) until it is given up after 24 hours. Secrets are opened only
// to sign and are never logged.
import type { Sql } from "../../db/client.ts";
import { type AttemptOutcome, claimDue, type Claimed, settle } from "../../db/webhook_delivery.ts";
import { open } from "../../common/sealed.ts";
import { signedHeaders } from "../../common/webhooks/signature.ts";
import { DEFAULT_RETRY, nextAttemptAt, type RetryPolicy } from "../../common/webhooks/retry.ts";
import { randomBase62 } from "../../common/ids.ts";
import { logger } from "../../common/log.ts";
import { untilAborted } from "../../common/until_aborted.ts";
import { concat } from "../../common/bytes.ts";

const log = logger("webhooks");

/** What the backoff is measured on; tests pass a manual one instead of waiting. */
export interface Clock {
  now(): number;
}

export interface DispatcherOptions {
  clock?: Clock;
  retry?: RetryPolicy;
  random?: () => number;
  /** The whole request, reply included (default 10 s). */
  timeoutMs?: number;
  /** How much of a reply is read and kept in the log (default 4 KiB); the rest is dropped. */
  maxResponseBytes?: number;
  /** Requests in flight at once per process (default 8). */
  concurrency?: number;
  /**
   * How long a claim is held (default: the request timeout + 30 s); a process that dies mid-request
   * holds its deliveries this long before another sends them again.
   */
  leaseSeconds?: number;
}

export const USER_AGENT = "voice-webhooks/1";

export class WebhookDispatcher {
  readonly #clock: Clock;
  readonly #timeoutMs: number;
  readonly #maxBytes: number;
  readonly #concurrency: number;
  #timer?: ReturnType<typeof setInterval>;
  #running?: Promise<unknown>;
  #stopped = false;
  /** Requests this dispatcher made (its share of the work, for tests and figures). */
  sent = 0;

  constructor(
    private readonly sql: Sql,
    private readonly key: CryptoKey,
    private readonly options: DispatcherOptions = {},
  ) {
    this.#clock = options.clock ?? { now: () => Date.now() };
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#maxBytes = options.maxResponseBytes ?? 4096;
    this.#concurrency = options.concurrency ?? 8;
  }

  /** Drains every `tickMs`. */
  start(tickMs = 500): void {
    this.#timer = setInterval(() => {
      if (this.#running || this.#stopped) return;
      this.#running = this.drain()
        .catch((err) => log.warn("webhook pass failed", { cause: (err as Error).message }))
        .finally(() => this.#running = undefined);
    }, tickMs);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    await this.#running;
  }

  /**
   * Passes until one finds nothing due; how many requests were made. A pass after one that sent
   * something sends at once the session events that were waiting for those.
   */
  async drain(): Promise<number> {
    let total = 0;
    while (!this.#stopped) {
      const n = await this.pass();
      total += n;
      if (n === 0) break;
    }
    return total;
  }

  /** One claim and its requests; how many were made. */
  async pass(): Promise<number> {
    const claimed = await claimDue(this.sql, {
      now: new Date(this.#clock.now()),
      limit: this.#concurrency,
      // Longer than any request may take, so a live sender's lease never runs out under it.
      leaseSeconds: this.options.leaseSeconds ?? Math.ceil(this.#timeoutMs / 1000) + 30,
      lease: randomBase62(16),
    });
    await Promise.all(claimed.map((c) => this.#deliver(c)));
    return claimed.length;
  }

  async #deliver(c: Claimed): Promise<void> {
    this.sent++;
    const attempted = new Date();
    const started = performance.now();
    let status: number | null = null, error: string | null = null, excerpt: string | null = null;
    try {
      const secret = await open(this.key, c.secret_sealed, c.endpoint_id);
      // The signature's time is the real one: receivers refuse timestamps far from their clock.
      const headers = await signedHeaders(
        secret,
        c.event_id,
        Math.floor(Date.now() / 1000),
        c.body,
      );
      const deadline = AbortSignal.timeout(this.#timeoutMs);
      const res = await fetch(c.url, {
        method: "POST",
        headers: { "content-type": "application/json", "user-agent": USER_AGENT, ...headers },
        body: c.body,
        redirect: "manual", // a redirect is the receiver's misconfiguration, not a delivery
        signal: deadline,
      });
      status = res.status;
      excerpt = await readBounded(res, this.#maxBytes, deadline);
      if (status < 200 || status > 299) error = `HTTP ${status}`;
    } catch (err) {
      error = (err as Error).name === "TimeoutError"
        ? `no reply within ${this.#timeoutMs} ms`
        // A URL may carry a customer's token in its query: the log names the endpoint instead.
        : (err as Error).message.replaceAll(c.url, c.endpoint_id).slice(0, 300);
    }
    const outcome: AttemptOutcome = {
      attempted_at: attempted,
      status_code: status,
      error,
      latency_ms: Math.round(performance.now() - started),
      response_excerpt: excerpt,
      next: { status: "delivered" },
    };
    if (error) {
      const at = nextAttemptAt(
        c.attempts,
        c.retry_from.getTime(),
        this.#clock.now(),
        this.options.retry ?? DEFAULT_RETRY,
        this.options.random,
      );
      outcome.next = at === undefined
        ? { status: "failed" }
        : { status: "pending", at: new Date(at) };
      log.info("webhook attempt failed", {
        delivery_id: c.delivery_id,
        endpoint_id: c.endpoint_id,
        attempts: c.attempts,
        error,
        next: outcome.next.status,
      });
    }
    await settle(this.sql, c, outcome);
  }
}

/**
 * At most `max` bytes of the reply as text; the rest is never read. A body that stalls fails at
 * the request's deadline, raced against it (see untilAborted).
 */
async function readBounded(
  res: Response,
  max: number,
  deadline: AbortSignal,
): Promise<string | null> {
  if (!res.body) return null;
  const reader = res.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < max) {
      const { done, value } = await untilAborted(reader.read(), deadline);
      if (done) break;
      parts.push(value.subarray(0, max - size));
      size += Math.min(value.length, max - size);
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return new TextDecoder().decode(concat(...parts));
}
