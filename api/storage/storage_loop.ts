// What every API process runs for customers' storage (issue 37): it signs pending uploads
// (presigned PUT URLs the worker uses, so bucket credentials stay here) and sweeps retention:
// sessions older than their agent's retention_days are deleted with their log, usage, local
// recording and the bucket objects the service wrote, each deletion logged and kept as a
// retention_deletions row. Rows are taken `for update skip locked`, so two API processes never
// delete the same session and neither waits for the other.
import type { Pool, Sql } from "../../db/client.ts";
import {
  getSealedStorage,
  type SealedStorage,
  setUploadUrls,
  uploadsToSign,
} from "../../db/agent_storage.ts";
import { logger } from "../../common/log.ts";
import { type Bucket, openBucket } from "./bucket.ts";
import { fileURLToPath } from "node:url";

const log = logger("storage");

/** Presigned URLs live an hour and are renewed when less than 5 minutes are left. */
export const PUT_URL_SECONDS = 3600;
const RENEW_MARGIN_SECONDS = 300;

export async function signPendingUploads(sql: Sql, key: CryptoKey | undefined): Promise<number> {
  const rows = await uploadsToSign(sql, RENEW_MARGIN_SECONDS);
  if (rows.length && !key) {
    log.warn("recordings wait for their bucket: TRUNK_CREDENTIALS_KEY is not set on the API", {
      pending: rows.length,
    });
    return 0;
  }
  const buckets = new Map<string, Bucket>();
  let n = 0;
  for (const u of rows) {
    try {
      let b = buckets.get(u.agent_id);
      if (!b) {
        b = await openBucket(key!, (await getSealedStorage(sql, u.agent_id)) as SealedStorage);
        buckets.set(u.agent_id, b);
      }
      await setUploadUrls(sql, u.session_id, {
        bucket: b.bucket,
        object_url: b.objectUrl(u.wav_key),
        wav: await b.presignPut(u.wav_key, PUT_URL_SECONDS),
        json: await b.presignPut(u.json_key, PUT_URL_SECONDS),
        expires: new Date(Date.now() + PUT_URL_SECONDS * 1000),
      });
      n++;
    } catch (err) {
      log.warn("could not sign a recording's upload", {
        session_id: u.session_id,
        cause: (err as Error).message,
      });
    }
  }
  return n;
}

interface Expired {
  id: string;
  agent_id: string;
  created_at: Date;
  recording_url: string | null;
  retention_days: number;
  local_path: string | null;
  wav_key: string | null;
  json_key: string | null;
  upload_status: string | null;
}

/** One retention pass: returns the sessions deleted. `key` opens the agents' bucket secrets. */
export async function sweepRetention(
  sql: Pool,
  key: CryptoKey | undefined,
  limit = 50,
): Promise<string[]> {
  // As the worker's uploads: an idle sweep is one plain read, no transaction.
  const [due] = await sql`select 1 from sessions s
    join agent_storage a on a.agent_id = s.agent_id and a.retention_days > 0
    where s.status in ('ended', 'failed', 'expired')
      and s.created_at < now() - a.retention_days * interval '1 day' limit 1`;
  if (!due) return [];
  return await sql.begin(async (t) => {
    const tx = t as unknown as Sql;
    const rows = await tx<Expired[]>`
      select s.id, s.agent_id, s.created_at, s.recording_url, a.retention_days,
        u.local_path, u.wav_key, u.json_key, u.status as upload_status
      from sessions s
      join agent_storage a on a.agent_id = s.agent_id and a.retention_days > 0
      left join recording_uploads u on u.session_id = s.id
      where s.status in ('ended', 'failed', 'expired')
        and s.created_at < now() - a.retention_days * interval '1 day'
      order by s.created_at limit ${limit}
      for update of s skip locked`;
    const deleted: string[] = [];
    const buckets = new Map<string, Bucket | null>();
    for (const r of rows) {
      const objects: string[] = [];
      try {
        // Only what the service wrote: the keys of a stored upload.
        if (r.upload_status === "stored" && r.wav_key && r.json_key) {
          if (!buckets.has(r.agent_id)) {
            const s = await getSealedStorage(tx, r.agent_id);
            buckets.set(r.agent_id, s?.bucket && key ? await openBucket(key, s) : null);
          }
          const b = buckets.get(r.agent_id);
          if (!b) throw new Error("the agent's bucket cannot be opened (no bucket or no key)");
          for (const k of [r.wav_key, r.json_key]) await b.remove(k), objects.push(k);
        }
      } catch (err) {
        // Kept, and tried again next pass: a record whose objects outlive it would be lost track of.
        log.warn("retention could not delete a session's bucket objects; kept for now", {
          session_id: r.id,
          cause: (err as Error).message,
        });
        continue;
      }
      const local = localRecording(r);
      if (local) await Deno.remove(local).catch(() => {});
      await tx`update campaign_attempts set session_id = null where session_id = ${r.id}`;
      await tx`delete from session_events where session_id = ${r.id}`;
      await tx`delete from usage where session_id = ${r.id}`;
      await tx`delete from sessions where id = ${r.id}`;
      const what = { local_recording: local, objects };
      await tx`insert into retention_deletions
          (agent_id, session_id, session_created_at, retention_days, deleted)
        values (${r.agent_id}, ${r.id}, ${r.created_at}, ${r.retention_days}, ${tx.json(what)})`;
      log.info("retention deleted a session", {
        session_id: r.id,
        agent_id: r.agent_id,
        retention_days: r.retention_days,
        objects: objects.length,
        local_recording: local ?? undefined,
      });
      deleted.push(r.id);
    }
    return deleted;
  });
}

/** The local file of a recording still on this host's disk, if the record names one. */
function localRecording(r: Expired): string | null {
  if (r.upload_status === "pending" && r.local_path) return r.local_path;
  if (r.recording_url?.startsWith("file:")) return fileURLToPath(r.recording_url);
  return null;
}

/** The loop: signing every `everyMs`, retention every `retentionEveryMs`. */
export class StorageLoop {
  #timer?: ReturnType<typeof setInterval>;
  #running = false;
  #lastRetention = 0;
  constructor(
    private sql: Pool,
    private key: CryptoKey | undefined,
    private retentionEveryMs = 60_000,
  ) {}

  start(everyMs = 1000): void {
    // The first retention pass waits a period: a process that restarts in a loop does not sweep
    // on every start.
    this.#lastRetention = Date.now();
    this.#timer = setInterval(() => void this.tick(), everyMs);
  }

  async tick(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    try {
      await signPendingUploads(this.sql, this.key);
      if (Date.now() - this.#lastRetention >= this.retentionEveryMs) {
        this.#lastRetention = Date.now();
        await sweepRetention(this.sql, this.key);
      }
    } catch (err) {
      log.warn("storage pass failed", { cause: (err as Error).message });
    } finally {
      this.#running = false;
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    while (this.#running) await new Promise((r) => setTimeout(r, 20));
  }
}
