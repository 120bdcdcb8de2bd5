// An agent's bucket and retention (issue 37), the recordings bound for a bucket, and what
// retention deleted. The secret is kept sealed; sealing and opening are the API's, never this
// file's (as db/trunks.ts).
import type { Pool, Sql } from "./client.ts";
import { enqueueRecordingStored } from "./webhook_outbox.ts";

/** An agent's storage as the admin API shows it: the secret is only "set" or not. */
export interface AgentStorage {
  agent_id: string;
  bucket: string | null;
  prefix: string;
  region: string;
  endpoint: string | null;
  access_key_id: string | null;
  /** Whether a secret access key is kept (it is never shown, sealed or not). */
  secret_access_key_set: boolean;
  retention_days: number;
  updated_at: Date;
}

/** What signing needs: the shown fields and the sealed secret, to be opened by the API. */
export interface SealedStorage extends AgentStorage {
  secret_sealed: string | null;
}

export interface StorageWrite {
  bucket: string | null;
  prefix: string;
  region: string;
  endpoint: string | null;
  access_key_id: string | null;
  secret_sealed: string | null;
  retention_days: number;
}

const shown = (r: SealedStorage): AgentStorage => {
  const { secret_sealed, ...rest } = r;
  return { ...rest, secret_access_key_set: secret_sealed != null };
};

export async function getSealedStorage(sql: Sql, agentId: string) {
  const [r] = await sql<SealedStorage[]>`
    select agent_id, bucket, prefix, region, endpoint, access_key_id, secret_sealed,
      retention_days, updated_at, false as secret_access_key_set
    from agent_storage where agent_id = ${agentId}`;
  return r;
}

export async function getStorage(sql: Sql, agentId: string): Promise<AgentStorage | undefined> {
  const r = await getSealedStorage(sql, agentId);
  return r && shown(r);
}

export async function putStorage(sql: Sql, agentId: string, w: StorageWrite) {
  const [r] = await sql<SealedStorage[]>`
    insert into agent_storage (agent_id, bucket, prefix, region, endpoint, access_key_id,
      secret_sealed, retention_days)
    values (${agentId}, ${w.bucket}, ${w.prefix}, ${w.region}, ${w.endpoint}, ${w.access_key_id},
      ${w.secret_sealed}, ${w.retention_days})
    on conflict (agent_id) do update set bucket = excluded.bucket, prefix = excluded.prefix,
      region = excluded.region, endpoint = excluded.endpoint,
      access_key_id = excluded.access_key_id, secret_sealed = excluded.secret_sealed,
      retention_days = excluded.retention_days, updated_at = now()
    returning agent_id, bucket, prefix, region, endpoint, access_key_id, secret_sealed,
      retention_days, updated_at`;
  return shown(r);
}

export async function removeStorage(sql: Sql, agentId: string): Promise<boolean> {
  return (await sql`delete from agent_storage where agent_id = ${agentId}`).count > 0;
}

/** Whether the agent's recordings go to a bucket (the worker asks once per recorded call). */
export async function agentHasBucket(sql: Sql, agentId: string): Promise<boolean> {
  const [r] = await sql`select 1 from agent_storage where agent_id = ${agentId}
    and bucket is not null`;
  return !!r;
}

/** A recording bound for a bucket, as the worker and the API read it. */
export interface RecordingUpload {
  session_id: string;
  agent_id: string;
  local_path: string;
  wav_key: string;
  json_key: string;
  bucket: string | null;
  object_url: string | null;
  wav_put_url: string | null;
  json_put_url: string | null;
  urls_expire_at: Date | null;
  status: "pending" | "stored";
  attempts: number;
  last_error: string | null;
}

/** The object keys of a session's recording: {prefix}/{agent}/{session}.wav and .json. */
export function objectKeys(prefix: string, agentId: string, sessionId: string) {
  const p = prefix.replace(/^\/+|\/+$/g, "");
  const base = `${p ? p + "/" : ""}${agentId}/${sessionId}`;
  return { wav: `${base}.wav`, json: `${base}.json` };
}

/** The worker's durable note that a closed recording waits for its bucket. */
export async function addUpload(
  sql: Sql,
  u: { session_id: string; agent_id: string; local_path: string },
): Promise<void> {
  const [s] = await sql<{ prefix: string }[]>`
    select prefix from agent_storage where agent_id = ${u.agent_id}`;
  const keys = objectKeys(s?.prefix ?? "", u.agent_id, u.session_id);
  await sql`insert into recording_uploads (session_id, agent_id, local_path, wav_key, json_key)
    values (${u.session_id}, ${u.agent_id}, ${u.local_path}, ${keys.wav}, ${keys.json})
    on conflict (session_id) do nothing`;
}

/** Pending uploads whose URLs are missing or expire within `marginSeconds` (the API signs them). */
export async function uploadsToSign(sql: Sql, marginSeconds: number, limit = 50) {
  return await sql<(RecordingUpload & { storage_prefix: string })[]>`
    select u.*, s.prefix as storage_prefix from recording_uploads u
    join agent_storage s on s.agent_id = u.agent_id
    where u.status = 'pending' and s.bucket is not null
      and (u.urls_expire_at is null or u.urls_expire_at < now() + ${marginSeconds} * interval '1 s')
    order by u.created_at limit ${limit}`;
}

export async function setUploadUrls(
  sql: Sql,
  sessionId: string,
  v: { bucket: string; object_url: string; wav: string; json: string; expires: Date },
) {
  await sql`update recording_uploads set bucket = ${v.bucket}, object_url = ${v.object_url},
      wav_put_url = ${v.wav}, json_put_url = ${v.json}, urls_expire_at = ${v.expires}
    where session_id = ${sessionId} and status = 'pending'`;
}

/**
 * Claims due uploads whose local file lives under `dir` (this worker's recordings folder) and
 * whose session has its end recorded: pushed `leaseSeconds` ahead so another worker on the same
 * folder skips them meanwhile.
 */
export async function claimUploads(sql: Pool, dir: string, leaseSeconds: number, limit = 5) {
  // The idle pass (nearly every pass) is one plain read: no transaction every second, which the
  // embedded PGlite's socket server interleaves badly with other clients' statements.
  const folder = dir.replace(/\/+$/, "") + "/";
  const [due] = await sql`select 1 from recording_uploads u join sessions s on s.id = u.session_id
    where u.status = 'pending' and u.next_attempt_at <= now() and u.wav_put_url is not null
      and s.status in ('ended', 'failed') and starts_with(u.local_path, ${folder}) limit 1`;
  if (!due) return [];
  return await sql.begin(async (tx) => {
    const rows = await (tx as unknown as Sql)<
      (RecordingUpload & { turns: unknown; started_at: Date | null; ended_at: Date | null })[]
    >`
      select u.*, s.turns, s.started_at, s.ended_at from recording_uploads u
      join sessions s on s.id = u.session_id
      where u.status = 'pending' and u.next_attempt_at <= now()
        and u.wav_put_url is not null and u.urls_expire_at > now() + interval '60 s'
        and s.status in ('ended', 'failed')
        and starts_with(u.local_path, ${folder})
      order by u.next_attempt_at limit ${limit}
      for update of u skip locked`;
    for (const r of rows) {
      await tx`update recording_uploads
        set next_attempt_at = now() + ${leaseSeconds} * interval '1 s'
        where session_id = ${r.session_id}`;
    }
    return rows;
  });
}

/**
 * How long the uploader of `dir` may sleep (ms): long when nothing of its folder is pending, short
 * while an upload waits for its URLs or its session's end, else until the next attempt is due.
 */
export async function uploadWaitMs(sql: Sql, dir: string, idleMs: number): Promise<number> {
  const folder = dir.replace(/\/+$/, "") + "/";
  const [r] = await sql<{ n: number; waiting: boolean | null; due_s: number | null }[]>`
    select count(*)::int as n,
      bool_or(u.wav_put_url is null or s.status not in ('ended', 'failed')) as waiting,
      extract(epoch from min(u.next_attempt_at) - now())::float8 as due_s
    from recording_uploads u join sessions s on s.id = u.session_id
    where u.status = 'pending' and starts_with(u.local_path, ${folder})`;
  if (!r.n) return idleMs;
  if (r.waiting) return 1000;
  return Math.min(idleMs, Math.max(1000, (r.due_s ?? 0) * 1000));
}

/** Stored: the record's recording location becomes the bucket object. */
export async function markStored(
  sql: Pool,
  sessionId: string,
  objectUrl: string,
  wav: { bytes: number; seconds: number },
) {
  await sql.begin(async (tx) => {
    await tx`update recording_uploads set status = 'stored', stored_at = now(),
        last_error = null, wav_put_url = null, json_put_url = null
      where session_id = ${sessionId}`;
    const [s] = await tx<{ workspace_id: string; agent_id: string }[]>`
      update sessions set recording_url = ${objectUrl} where id = ${sessionId}
      returning workspace_id, agent_id`;
    // recording.stored is queued with the fact it reports, as every webhook is (docs/webhooks.md).
    if (s) {
      await enqueueRecordingStored(tx as unknown as Sql, s.workspace_id, {
        session_id: sessionId,
        agent_id: s.agent_id,
        url: objectUrl,
        transcript_url: objectUrl.replace(/\.wav$/, ".json"),
        content_type: "audio/wav",
        bytes: wav.bytes,
        duration_seconds: wav.seconds,
      });
    }
  });
}

export async function markFailed(sql: Sql, sessionId: string, error: string, retryIn: number) {
  await sql`update recording_uploads set attempts = attempts + 1, last_error = ${error},
      next_attempt_at = now() + ${retryIn} * interval '1 s'
    where session_id = ${sessionId}`;
}

export async function getUpload(sql: Sql, sessionId: string) {
  const [r] = await sql<RecordingUpload[]>`
    select * from recording_uploads where session_id = ${sessionId}`;
  return r;
}

/** Uploads not stored yet, for the console and the metric. */
export async function pendingUploads(sql: Sql, agentId?: string) {
  return await sql<RecordingUpload[]>`
    select * from recording_uploads where status = 'pending'
      ${agentId ? sql`and agent_id = ${agentId}` : sql``}
    order by created_at`;
}
