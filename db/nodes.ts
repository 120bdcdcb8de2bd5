// Worker nodes: registration, heartbeat, and the reservation counter that node choice reads.
import type { Pool, Sql } from "./client.ts";
import { LOCAL_SERVES, type ServeMatrix } from "../common/capabilities.ts";
import { enqueueEnded } from "./webhook_outbox.ts";

export interface WorkerNode {
  node_id: string;
  offer_base_url: string;
  capacity: number;
  active_calls: number;
  heartbeat_at: Date;
  draining: boolean;
  serves: ServeMatrix;
  /** Where it takes SIP calls (null: no SIP; never chosen for a phone call). */
  sip_address: string | null;
  sip_port: number | null;
}

/** What a worker registers: its offer URL and capacity, and with SIP, its SIP address and port. */
export interface WorkerRegistration {
  node_id: string;
  offer_base_url: string;
  capacity: number;
  serves?: ServeMatrix;
  sip_address?: string | null;
  sip_port?: number | null;
}

/**
 * Registers (or re-registers after a restart) a node. Calls the node had in flight died with the
 * old process: they are marked failed and the reservation counter starts again from zero.
 * `serves` is what its engines serve; a node registered without it runs the local engines.
 */
export async function registerNode(
  sql: Pool,
  node: WorkerRegistration,
): Promise<void> {
  const serves = sql.json((node.serves ?? LOCAL_SERVES) as never);
  await sql.begin(async (tx) => {
    await tx`insert into worker_nodes (id, offer_base_url, capacity, active_calls, heartbeat_at,
                                       draining, started_at, serves, sip_address, sip_port)
      values (${node.node_id}, ${node.offer_base_url}, ${node.capacity}, 0, now(), false, now(),
              ${serves}, ${node.sip_address ?? null}, ${node.sip_port ?? null})
      on conflict (id) do update set offer_base_url = excluded.offer_base_url,
        capacity = excluded.capacity, active_calls = 0, heartbeat_at = now(), draining = false,
        started_at = now(), serves = excluded.serves, sip_address = excluded.sip_address,
        sip_port = excluded.sip_port`;
    await tx`update sessions set status = 'failed', end_reason = 'worker_restarted',
        ended_at = now()
      where node_id = ${node.node_id} and status in ('created', 'connecting', 'active')`;
  });
}

/**
 * The node is alive; with `serves`, what its engines serve changed (a provider engine went down
 * or came back) and sessions.connect reads the new matrix from here on.
 */
export async function heartbeat(
  sql: Sql,
  nodeId: string,
  state: { draining?: boolean; capacity?: number; serves?: ServeMatrix } = {},
): Promise<void> {
  const serves = state.serves ? sql.json(state.serves as never) : null;
  await sql`update worker_nodes set heartbeat_at = now(),
      draining = coalesce(${state.draining ?? null}::boolean, draining),
      capacity = coalesce(${state.capacity ?? null}::integer, capacity),
      serves = coalesce(${serves}::jsonb, serves)
    where id = ${nodeId}`;
}

export async function listNodes(sql: Sql): Promise<WorkerNode[]> {
  return await sql<WorkerNode[]>`select id as node_id, offer_base_url, capacity, active_calls,
    heartbeat_at, draining, serves, sip_address, sip_port from worker_nodes order by id`;
}

/**
 * What the live nodes serve: one matrix per node whose heartbeat is fresher than `staleSeconds`
 * and that is not draining (the nodes sessions.connect may choose).
 */
export async function liveServes(sql: Sql, staleSeconds: number): Promise<ServeMatrix[]> {
  const rows = await sql<{ serves: ServeMatrix }[]>`select serves from worker_nodes
    where not draining and heartbeat_at > now() - make_interval(secs => ${staleSeconds})
    order by id`;
  return rows.map((r) => r.serves);
}

/**
 * Sessions whose node stopped heartbeating (died without draining: killed, crashed, cut off) for
 * longer than `staleSeconds` are failed with `worker_lost`, so none stays `active` forever. Their
 * call seconds are booked up to the node's last heartbeat, the last moment the call was known to
 * run. Run by the API side (each process's sweeper); the update is idempotent across processes,
 * and a slot goes back only from a session that still holds it (sessions.holds_slot).
 */
export async function failLostSessions(sql: Sql, staleSeconds: number): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    with before as (
      select s.id, s.holds_slot, n.heartbeat_at from sessions s join worker_nodes n
        on s.node_id = n.id
      where s.status in ('connecting', 'active')
        and n.heartbeat_at < now() - make_interval(secs => ${staleSeconds})
      for update of s skip locked
    ), lost as (
      update sessions s set status = 'failed', end_reason = 'worker_lost', ended_at = now(),
        holds_slot = false, hold_until = null
      from before where s.id = before.id
      returning s.id, s.node_id, s.started_at, before.heartbeat_at, before.holds_slot,
        s.workspace_id, s.agent_id, s.direction, s.metadata, s.created_at, s.ended_at
    ), hooked as (${enqueueEnded(sql, "lost", "failed", "worker_lost")}), per_node as (
      select node_id, count(*)::int as n from lost where holds_slot group by node_id
    ), released as (
      update worker_nodes w set active_calls = greatest(w.active_calls - per_node.n, 0)
      from per_node where w.id = per_node.node_id
    ), billed as (
      update usage u set call_seconds =
        greatest(coalesce(extract(epoch from lost.heartbeat_at - lost.started_at), 0), 0)
      from lost where u.session_id = lost.id
    )
    select id, (select count(event_id) from hooked) as hooked from lost`;
  return rows.map((r) => r.id);
}
