// Taking and settling the outbox's deliveries (api/webhooks/dispatcher.ts). A claim is one
// statement: due rows are locked `for update skip locked` and leased, so of several API processes
// exactly one sends a row at a time without holding a transaction open through the request; a
// process that dies mid-request leaves a lease that runs out, and the row is sent again with the
// same webhook-id. A session's delivery is due only when no earlier one of the same session to the
// same endpoint is pending (delivered or given up), so a session's events arrive in order.
import type { Sql } from "./client.ts";

export interface Claimed {
  delivery_id: string;
  event_id: string;
  endpoint_id: string;
  session_id: string | null;
  body: string;
  url: string;
  secret_sealed: string;
  /** Counting this one. */
  attempts: number;
  retry_from: Date;
  lease: string;
}

/** Up to `limit` due deliveries, leased for `leaseSeconds` (database time) to this caller. */
export async function claimDue(sql: Sql, o: {
  now: Date;
  limit: number;
  leaseSeconds: number;
  lease: string;
}): Promise<Claimed[]> {
  return await sql<Claimed[]>`
    with due as (
      select d.id from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id
      where d.status = 'pending' and d.next_attempt_at <= ${o.now}
        and e.enabled and e.deleted_at is null
        and (d.leased_until is null or d.leased_until < now())
        and (d.session_id is null or not exists (
          select 1 from webhook_deliveries p
          where p.endpoint_id = d.endpoint_id and p.session_id = d.session_id
            and p.status = 'pending' and p.id < d.id))
      order by d.id
      limit ${o.limit}
      for update of d skip locked
    )
    update webhook_deliveries d set attempts = d.attempts + 1, lease = ${o.lease},
      retry_from = coalesce(d.retry_from, ${o.now}),
      leased_until = now() + make_interval(secs => ${o.leaseSeconds})
    from due, webhook_events ev, webhook_endpoints e
    where d.id = due.id and ev.id = d.event_id and e.id = d.endpoint_id
    returning d.id::text as delivery_id, d.event_id, d.endpoint_id, d.session_id, ev.body, e.url,
      e.secret_sealed, d.attempts, d.retry_from, d.lease`;
}

export interface AttemptOutcome {
  attempted_at: Date;
  status_code: number | null;
  error: string | null;
  latency_ms: number;
  response_excerpt: string | null;
  /** delivered; pending with the next attempt's time; or failed (given up). */
  next: { status: "delivered" } | { status: "pending"; at: Date } | { status: "failed" };
}

/**
 * Logs the attempt and settles the delivery, if this caller still holds its lease (a lease that
 * ran out may have been taken by another process, whose outcome then stands).
 */
export async function settle(sql: Sql, c: Claimed, a: AttemptOutcome): Promise<void> {
  const next = a.next.status === "pending" ? a.next.at : null;
  await sql`
    with logged as (
      insert into webhook_attempts
        (delivery_id, attempted_at, status_code, error, latency_ms, response_excerpt)
      values (${c.delivery_id}, ${a.attempted_at}, ${a.status_code}, ${a.error}, ${a.latency_ms},
        ${a.response_excerpt})
    )
    update webhook_deliveries set status = ${a.next.status},
      next_attempt_at = coalesce(${next}, next_attempt_at), leased_until = null, lease = null,
      last_status_code = ${a.status_code}, last_error = ${a.error},
      delivered_at = case when ${a.next.status} = 'delivered' then now() end
    where id = ${c.delivery_id} and lease = ${c.lease}`;
}
