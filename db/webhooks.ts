// Webhook endpoints (a workspace's or one agent's) and their delivery log. The outbox rows are
// written by webhook_enqueue (db/migrations/0011_webhooks.sql, db/webhook_outbox.ts); sending
// them is db/webhook_delivery.ts. An endpoint's secret is stored sealed and never read back here.
import type { Sql } from "./client.ts";

export interface WebhookEndpoint {
  endpoint_id: string;
  workspace_id: string;
  tenant: string;
  /** Null: every agent of the workspace. */
  agent_id: string | null;
  url: string;
  description: string;
  /** Empty: every event type. */
  event_types: string[];
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = (sql: Sql) =>
  sql`e.id as endpoint_id, e.workspace_id, w.name as tenant, e.agent_id, e.url, e.description,
      e.event_types, e.enabled, e.created_at, e.updated_at`;

export async function workspaceIdByName(sql: Sql, tenant: string): Promise<string | undefined> {
  const [row] = await sql<{ id: string }[]>`select id from workspaces where name = ${tenant}`;
  return row?.id;
}

export async function createEndpoint(sql: Sql, e: {
  endpoint_id: string;
  workspace_id: string;
  agent_id: string | null;
  url: string;
  description: string;
  event_types: string[];
  secret_sealed: string;
}): Promise<WebhookEndpoint> {
  await sql`insert into webhook_endpoints
      (id, workspace_id, agent_id, url, description, event_types, secret_sealed)
    values (${e.endpoint_id}, ${e.workspace_id}, ${e.agent_id}, ${e.url}, ${e.description},
      ${e.event_types}, ${e.secret_sealed})`;
  return (await getEndpoint(sql, e.endpoint_id))!;
}

export async function getEndpoint(sql: Sql, id: string): Promise<WebhookEndpoint | undefined> {
  const [row] = await sql<WebhookEndpoint[]>`select ${COLUMNS(sql)}
    from webhook_endpoints e join workspaces w on w.id = e.workspace_id
    where e.id = ${id} and e.deleted_at is null`;
  return row;
}

export async function listEndpoints(
  sql: Sql,
  f: { workspace_id?: string; agent_id?: string } = {},
): Promise<WebhookEndpoint[]> {
  return await sql<WebhookEndpoint[]>`select ${COLUMNS(sql)}
    from webhook_endpoints e join workspaces w on w.id = e.workspace_id
    where e.deleted_at is null
      ${f.workspace_id ? sql`and e.workspace_id = ${f.workspace_id}` : sql``}
      ${f.agent_id ? sql`and e.agent_id = ${f.agent_id}` : sql``}
    order by e.created_at, e.id`;
}

export async function updateEndpoint(sql: Sql, id: string, u: {
  url?: string;
  description?: string;
  event_types?: string[];
  enabled?: boolean;
}): Promise<WebhookEndpoint | undefined> {
  const rows = await sql`update webhook_endpoints set
      url = coalesce(${u.url ?? null}, url),
      description = coalesce(${u.description ?? null}, description),
      event_types = coalesce(${u.event_types ?? null}::text[], event_types),
      enabled = coalesce(${u.enabled ?? null}, enabled), updated_at = now()
    where id = ${id} and deleted_at is null returning id`;
  return rows.length ? await getEndpoint(sql, id) : undefined;
}

/** Deleted: nothing new is queued for it and what it was still owed is given up (logged). */
export async function deleteEndpoint(sql: Sql, id: string): Promise<boolean> {
  const rows = await sql`
    with gone as (
      update webhook_endpoints set deleted_at = now(), enabled = false
      where id = ${id} and deleted_at is null returning id
    ), dropped as (
      update webhook_deliveries d set status = 'failed', last_error = 'endpoint deleted',
        leased_until = null
      from gone where d.endpoint_id = gone.id and d.status = 'pending'
    )
    select id from gone`;
  return rows.length === 1;
}

/** The endpoint's sealed secret (for signing only; never returned by the API). */
export async function sealedSecret(sql: Sql, id: string): Promise<string | undefined> {
  const [row] = await sql<{ secret_sealed: string }[]>`
    select secret_sealed from webhook_endpoints where id = ${id}`;
  return row?.secret_sealed;
}

/** Any endpoint's sealed secret: the API checks its sealing key opens it before starting. */
export async function anySealedEndpoint(
  sql: Sql,
): Promise<{ endpoint_id: string; secret_sealed: string } | undefined> {
  const [row] = await sql<{ endpoint_id: string; secret_sealed: string }[]>`
    select id as endpoint_id, secret_sealed from webhook_endpoints
    where deleted_at is null limit 1`;
  return row;
}

export interface DeliveryRow {
  delivery_id: string;
  event_id: string;
  type: string;
  session_id: string | null;
  endpoint_id: string;
  status: "pending" | "delivered" | "failed";
  attempts: number;
  next_attempt_at: Date;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: Date | null;
  created_at: Date;
}

/** The delivery log of an endpoint, newest first (optionally one session's). */
export async function listDeliveries(sql: Sql, f: {
  endpoint_id?: string;
  delivery_id?: string;
  session_id?: string;
  status?: string;
  limit: number;
}): Promise<DeliveryRow[]> {
  return await sql<DeliveryRow[]>`select d.id::text as delivery_id, d.event_id, ev.type,
      d.session_id, d.endpoint_id, d.status, d.attempts, d.next_attempt_at, d.last_status_code,
      d.last_error, d.delivered_at, d.created_at
    from webhook_deliveries d join webhook_events ev on ev.id = d.event_id
    where true ${f.endpoint_id ? sql`and d.endpoint_id = ${f.endpoint_id}` : sql``}
      ${f.delivery_id ? sql`and d.id = ${f.delivery_id}` : sql``}
      ${f.session_id ? sql`and d.session_id = ${f.session_id}` : sql``}
      ${f.status ? sql`and d.status = ${f.status}` : sql``}
    order by d.id desc limit ${f.limit}`;
}

export interface AttemptRow {
  attempted_at: Date;
  status_code: number | null;
  error: string | null;
  latency_ms: number;
  response_excerpt: string | null;
}

export async function listAttempts(sql: Sql, deliveryId: string): Promise<AttemptRow[]> {
  return await sql<AttemptRow[]>`select attempted_at, status_code, error, latency_ms,
      response_excerpt from webhook_attempts where delivery_id = ${deliveryId} order by id`;
}

/**
 * Sends a delivery again, whatever became of it: pending at once, with a new 24-hour retry window
 * and the same webhook-id (a receiver that kept the id drops it). Refused for a deleted endpoint.
 */
export async function redeliver(sql: Sql, deliveryId: string): Promise<DeliveryRow | undefined> {
  if (!/^[0-9]{1,18}$/.test(deliveryId)) return undefined;
  const rows = await sql`
    update webhook_deliveries d set status = 'pending', next_attempt_at = now(),
      retry_from = null, leased_until = null, lease = null, delivered_at = null
    from webhook_endpoints e
    where d.id = ${deliveryId} and e.id = d.endpoint_id and e.deleted_at is null
    returning d.endpoint_id`;
  if (!rows.length) return undefined;
  return (await listDeliveries(sql, { delivery_id: deliveryId, limit: 1 }))[0];
}
