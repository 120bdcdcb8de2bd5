// Issue 37: a closed recording of an agent with a bucket ends in that bucket (a real S3 server
// checking Signature V4) as the WAV and its per-turn transcript JSON, the local copy removed and
// the record pointing at the object; the server down at the end of the call and then up gets the
// upload retried and stored; wrong credentials are reported in the session log and keep the file.
import assert from "node:assert/strict";
import { makeTenant, startTestApi } from "./helpers/api_server.ts";
import { S3_ACCESS_KEY_ID, S3_SECRET, startS3Server } from "./helpers/s3_server.ts";
import { seedSession } from "./helpers/sample_session.ts";
import { newSealingKeyText } from "../common/sealed.ts";
import { noteRecording, RecordingUploader } from "../media/call/recording_store.ts";
import { signPendingUploads } from "../api/storage/storage_loop.ts";
import { getUpload } from "../db/agent_storage.ts";

const BUCKET = "calls";

async function setUp(secret = S3_SECRET) {
  const s3 = await startS3Server(BUCKET);
  const api = await startTestApi({ TRUNK_CREDENTIALS_KEY: newSealingKeyText() });
  const tenant = await makeTenant(api);
  const set = await api.admin("/api/v1/storage.set", {
    agent_id: tenant.agent_id,
    bucket: BUCKET,
    prefix: "voice/",
    endpoint: s3.endpoint,
    access_key_id: S3_ACCESS_KEY_ID,
    secret_access_key: secret,
  });
  assert.equal(set.status, 200, JSON.stringify(set.body));
  assert.equal(set.body.storage.secret_access_key_set, true);
  // S3RVER's secret equals its key id, so the check is on the fields, not the text.
  assert.deepEqual(Object.keys(set.body.storage).filter((k) => k.startsWith("secret")), [
    "secret_access_key_set",
  ]);
  // A customer's endpoint, so storing queues recording.stored (docs/webhooks.md).
  const hook = await api.admin("/api/v1/webhooks.create", {
    tenant: "acme",
    url: "http://127.0.0.1:9/hooks",
    event_types: ["recording.stored"],
  });
  assert.equal(hook.status, 200, JSON.stringify(hook.body));
  const dir = await Deno.makeTempDir({ prefix: "recordings-" });
  const session = await seedSession(api.db.sql, {
    agent_id: tenant.agent_id,
    workspace_id: tenant.workspace_id,
  });
  const wav = new Uint8Array(44 + 64000).map((_, i) => i % 251);
  const path = `${dir}/${session.session_id}.wav`;
  await Deno.writeFile(path, wav);
  assert.ok(
    await noteRecording(api.db.sql, {
      session_id: session.session_id,
      agent_id: tenant.agent_id,
      local_path: path,
    }),
  );
  const stored: string[] = [];
  const uploader = new RecordingUploader({
    sql: api.db.sql,
    recordingsDir: dir,
    retry: { firstMs: 0, maxMs: 0, jitter: 0 },
    onStored: (s) => void stored.push(s.session_id),
  });
  const sign = () => signPendingUploads(api.db.sql, api.deps.trunkKey);
  const close = async () => {
    await api.close();
    await s3.stop().catch(() => {});
  };
  return { s3, api, tenant, session, wav, path, uploader, stored, sign, close };
}

const exists = (p: string) => Deno.stat(p).then(() => true, () => false);

Deno.test("a recording and its transcript are stored in the bucket and the local copy goes", async () => {
  const t = await setUp();
  try {
    assert.equal(await t.sign(), 1);
    assert.equal(await t.uploader.runOnce(), 1);
    const id = t.session.session_id;
    const key = `voice/${t.tenant.agent_id}/${id}`;
    assert.deepEqual(await t.s3.object(BUCKET, `${key}.wav`), t.wav);
    // recording.stored was queued in the transaction that marked the upload stored.
    const [event] = await t.api.db.sql<{ type: string; body: string }[]>`
      select type, body from webhook_events where session_id = ${id}`;
    assert.equal(event?.type, "recording.stored");
    const data = JSON.parse(event.body).data;
    assert.equal(data.bytes, t.wav.length);
    assert.match(String(data.url), new RegExp(`${id}\\.wav$`));
    assert.match(String(data.transcript_url), new RegExp(`${id}\\.json$`));
    const json = JSON.parse(new TextDecoder().decode(await t.s3.object(BUCKET, `${key}.json`)));
    assert.equal(json.session_id, id);
    assert.equal(json.recording.key, `${key}.wav`);
    const [rec] = await t.api.db.sql`select turns from sessions where id = ${id}`;
    assert.deepEqual(
      json.turns.map((x: { turn_id: string }) => x.turn_id),
      rec.turns.map((x: { turn_id: string }) => x.turn_id),
    );
    assert.ok(
      json.turns.some((x: { bot: { cut_off: boolean }[] }) => x.bot.some((u) => u.cut_off)),
    );
    const at = json.turns.map((x: { at_seconds: number }) => x.at_seconds);
    assert.deepEqual(at, [...at].sort((a, b) => a - b), "turns are on the recording's timeline");
    assert.ok(at.at(-1) > 0);
    assert.equal(await exists(t.path), false, "the local copy is removed once stored");
    const [s] = await t.api.db.sql`select recording_url from sessions where id = ${id}`;
    assert.equal(s.recording_url, `${t.s3.endpoint}/${BUCKET}/${key}.wav`);
    assert.deepEqual(t.stored, [id]);
    const events = await t.api.db.sql`select kind from session_events
      where session_id = ${id} and kind like 'recording_%'`;
    assert.deepEqual(events.map((e) => e.kind), ["recording_stored"]);
  } finally {
    await t.close();
  }
});

Deno.test("a bucket down at the end of the call gets the upload retried and stored", async () => {
  const t = await setUp();
  try {
    await t.sign();
    await t.s3.stop();
    assert.equal(await t.uploader.runOnce(), 0);
    const failed = await getUpload(t.api.db.sql, t.session.session_id);
    assert.equal(failed.status, "pending");
    assert.equal(failed.attempts, 1);
    assert.ok(failed.last_error);
    assert.equal(await exists(t.path), true, "kept while not stored");
    await t.s3.restart();
    // A new uploader: what a restarted worker finds in the database.
    const again = new RecordingUploader({
      sql: t.api.db.sql,
      recordingsDir: await Deno.makeTempDir({ prefix: "another-worker-" }),
    });
    const restarted = new RecordingUploader({
      sql: t.api.db.sql,
      recordingsDir: t.path.slice(0, t.path.lastIndexOf("/")),
    });
    assert.equal(await again.runOnce(), 0, "another worker's folder is not this one's");
    assert.equal(await restarted.runOnce(), 1);
    assert.equal((await getUpload(t.api.db.sql, t.session.session_id)).status, "stored");
    assert.equal(await exists(t.path), false);
  } finally {
    await t.close();
  }
});

Deno.test("wrong bucket credentials are reported and the recording is kept", async () => {
  const t = await setUp("not-the-secret");
  try {
    await t.sign();
    assert.equal(await t.uploader.runOnce(), 0);
    const u = await getUpload(t.api.db.sql, t.session.session_id);
    assert.equal(u.status, "pending");
    assert.match(u.last_error!, /403: SignatureDoesNotMatch/);
    assert.equal(await exists(t.path), true);
    const [e] = await t.api.db.sql`select data from session_events
      where session_id = ${t.session.session_id} and kind = 'recording_upload_failed'`;
    assert.match(e.data.error, /SignatureDoesNotMatch/);
    assert.ok(!JSON.stringify(e.data).includes("not-the-secret"));
    const [s] = await t.api.db.sql`select recording_url from sessions
      where id = ${t.session.session_id}`;
    assert.equal(s.recording_url, null);
    const metrics = await fetch(`${t.api.url}/metrics`, {
      headers: { authorization: `Bearer ${t.api.adminToken}` },
    }).then((r) => r.text());
    assert.match(metrics, /voice_recording_uploads_pending\{state="failing"\} 1/);
  } finally {
    await t.close();
  }
});
