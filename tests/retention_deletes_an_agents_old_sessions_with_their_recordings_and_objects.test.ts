// Issue 37: sessions older than their agent's retention are deleted with their log, usage, local
// recording and the bucket objects the service wrote, each deletion kept as a retention_deletions
// row; live sessions, younger ones and agents that keep (0 or unset) are left alone. The clock is
// the rows': they are backdated.
import assert from "node:assert/strict";
import { recordingUrl } from "../media/call/recording.ts";
import { makeTenant, startTestApi } from "./helpers/api_server.ts";
import { S3_ACCESS_KEY_ID, S3_SECRET, startS3Server } from "./helpers/s3_server.ts";
import { seedSession } from "./helpers/sample_session.ts";
import { newSealingKeyText } from "../common/sealed.ts";
import { noteRecording, RecordingUploader } from "../media/call/recording_store.ts";
import { signPendingUploads, sweepRetention } from "../api/storage/storage_loop.ts";
import { freshDatabase, realPostgresUrl } from "./helpers/database.ts";

const DAY = 86_400_000;
const exists = (p: string) => Deno.stat(p).then(() => true, () => false);

Deno.test("retention deletes an agent's old sessions with their recordings and bucket objects", async () => {
  const s3 = await startS3Server("calls");
  const api = await startTestApi({ TRUNK_CREDENTIALS_KEY: newSealingKeyText() });
  try {
    const sql = api.db.sql;
    const dir = await Deno.makeTempDir({ prefix: "recordings-" });
    const withBucket = await makeTenant(api, "acme");
    const localOnly = await makeTenant(api, "beta");
    const keeps = await makeTenant(api, "gamma");
    for (
      const [t, extra] of [
        [withBucket, {
          bucket: "calls",
          endpoint: s3.endpoint,
          access_key_id: S3_ACCESS_KEY_ID,
          secret_access_key: S3_SECRET,
          retention_days: 30,
        }],
        [localOnly, { retention_days: 7 }],
        [keeps, { retention_days: 0 }],
      ] as const
    ) {
      const r = await api.admin("/api/v1/storage.set", { agent_id: t.agent_id, ...extra });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    }
    const seed = async (t: typeof withBucket, days: number, status?: "active") => {
      const path = `${dir}/${crypto.randomUUID()}.wav`;
      await Deno.writeFile(path, new Uint8Array(4000));
      const s = await seedSession(sql, {
        agent_id: t.agent_id,
        workspace_id: t.workspace_id,
        created_at: new Date(Date.now() - days * DAY),
        recording_url: recordingUrl(path),
        status,
      });
      return { id: s.session_id, path };
    };
    // Stored in the bucket 40 days ago: objects and record go.
    const stored = await seed(withBucket, 40);
    await noteRecording(sql, {
      session_id: stored.id,
      agent_id: withBucket.agent_id,
      local_path: stored.path,
    });
    await signPendingUploads(sql, api.deps.trunkKey);
    assert.equal(await new RecordingUploader({ sql, recordingsDir: dir }).runOnce(), 1);
    const [u] = await sql`select wav_key, json_key from recording_uploads
      where session_id = ${stored.id}`;
    assert.ok(await s3.object("calls", u.wav_key));
    const young = await seed(withBucket, 10);
    const oldLocal = await seed(localOnly, 8);
    const live = await seed(localOnly, 9, "active");
    const kept = await seed(keeps, 400);

    const deleted = await sweepRetention(sql, api.deps.trunkKey);
    assert.deepEqual(deleted.sort(), [stored.id, oldLocal.id].sort());
    for (const id of deleted) {
      assert.equal((await sql`select 1 from sessions where id = ${id}`).length, 0);
      assert.equal((await sql`select 1 from session_events where session_id = ${id}`).length, 0);
      assert.equal((await sql`select 1 from usage where session_id = ${id}`).length, 0);
    }
    for (const s of [young, live, kept]) {
      assert.equal((await sql`select 1 from sessions where id = ${s.id}`).length, 1);
      assert.equal(await exists(s.path), true);
    }
    assert.equal(await s3.object("calls", u.wav_key), undefined, "the WAV object is deleted");
    assert.equal(await s3.object("calls", u.json_key), undefined, "the transcript is deleted");
    assert.equal(await exists(oldLocal.path), false, "the local recording is deleted");
    const audit = await sql`select session_id, retention_days, deleted from retention_deletions
      order by session_id`;
    // Both sides sorted here: the database's `order by` follows its collation (byte order under
    // C), which puts 'B' before 'a' where localeCompare does not.
    const byIdOrder = (a: unknown[], b: unknown[]) => String(a[0]).localeCompare(String(b[0]));
    assert.deepEqual(
      audit.map((a) => [a.session_id, a.retention_days]).sort(byIdOrder),
      [[stored.id, 30], [oldLocal.id, 7]].sort(byIdOrder),
    );
    const byId = Object.fromEntries(audit.map((a) => [a.session_id, a.deleted]));
    assert.deepEqual(byId[stored.id].objects, [u.wav_key, u.json_key]);
    assert.equal(byId[oldLocal.id].local_recording, oldLocal.path);
    assert.deepEqual(await sweepRetention(sql, api.deps.trunkKey), [], "a second pass finds none");
  } finally {
    await api.close();
    await s3.stop();
  }
});

// Every API process sweeps; `for update skip locked` makes each session one process's. PGlite
// serves one stream at a time, so this runs only with DATABASE_URL (as CI does).
Deno.test({
  name: "two API processes sweeping at once delete each old session once",
  ignore: !realPostgresUrl,
}, async () => {
  const api = await startTestApi({}, { db: await freshDatabase({ max: 12 }) });
  try {
    const sql = api.db.sql;
    const t = await makeTenant(api);
    await api.admin("/api/v1/storage.set", { agent_id: t.agent_id, retention_days: 1 });
    const ids = new Set<string>();
    for (let i = 0; i < 30; i++) {
      const s = await seedSession(sql, {
        agent_id: t.agent_id,
        workspace_id: t.workspace_id,
        created_at: new Date(Date.now() - 2 * DAY),
      });
      ids.add(s.session_id);
    }
    const sweeper = async () => {
      const mine: string[] = [];
      for (;;) {
        const batch = await sweepRetention(sql, undefined, 4);
        if (!batch.length) return mine;
        mine.push(...batch);
      }
    };
    const [a, b] = await Promise.all([sweeper(), sweeper()]);
    assert.deepEqual([...a, ...b].sort(), [...ids].sort(), "each session once");
    const [{ n }] = await sql`select count(*)::int as n from retention_deletions`;
    assert.equal(n, 30);
  } finally {
    await api.close();
  }
});
