// `deno task bench storage`: what storing a call's recording in the agent's bucket costs (issue
// 37), against writing the local file, in the same run: per call length, the time to write the
// WAV locally (CallRecording, the baseline every recorded call already pays) and the time from
// "the call's end is recorded" to "the WAV and transcript are in the bucket" (sign, PUT both,
// point the record at the object, remove the local copy), with the bytes sent. The bucket is
// @20minutes/s3rver on this machine (Signature V4 checked), so network time is loopback only:
// the figure is the service's own cost, a floor for a real bucket.
import { makeTenant, startTestApi } from "../tests/helpers/api_server.ts";
import { S3_ACCESS_KEY_ID, S3_SECRET, startS3Server } from "../tests/helpers/s3_server.ts";
import { seedSession } from "../tests/helpers/sample_session.ts";
import { newSealingKeyText } from "../common/sealed.ts";
import { CallRecording } from "../media/call/recording.ts";
import { noteRecording, RecordingUploader } from "../media/call/recording_store.ts";
import { signPendingUploads } from "../api/storage/storage_loop.ts";

const LENGTHS_S = [30, 120, 600];
const RUNS = 3;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const s3 = await startS3Server("calls");
const api = await startTestApi({ TRUNK_CREDENTIALS_KEY: newSealingKeyText() });
const t = await makeTenant(api);
await api.admin("/api/v1/storage.set", {
  agent_id: t.agent_id,
  bucket: "calls",
  endpoint: s3.endpoint,
  access_key_id: S3_ACCESS_KEY_ID,
  secret_access_key: S3_SECRET,
});
const dir = await Deno.makeTempDir({ prefix: "bench-recordings-" });
const uploader = new RecordingUploader({ sql: api.db.sql, recordingsDir: dir });
const caller = new Int16Array(320).map((_, i) => Math.round(3000 * Math.sin(i / 5)));
const bot = new Int16Array(960).map((_, i) => Math.round(3000 * Math.sin(i / 7)));

console.log("call length | local write ms | upload ms | upload / local | bytes | upload MB/s");
for (const seconds of LENGTHS_S) {
  const local: number[] = [], upload: number[] = [];
  let bytes = 0;
  for (let run = 0; run < RUNS; run++) {
    const s = await seedSession(api.db.sql, { agent_id: t.agent_id, workspace_id: t.workspace_id });
    const path = `${dir}/${s.session_id}.wav`;
    let started = performance.now();
    const rec = new CallRecording(path);
    for (let f = 0; f < seconds * 50; f++) {
      rec.pushCaller(caller);
      rec.tick(f % 2 ? bot : undefined);
    }
    await rec.close();
    local.push(performance.now() - started);
    bytes = (await Deno.stat(path)).size;
    started = performance.now();
    await noteRecording(api.db.sql, {
      session_id: s.session_id,
      agent_id: t.agent_id,
      local_path: path,
    });
    await signPendingUploads(api.db.sql, api.deps.trunkKey);
    if (await uploader.runOnce() !== 1) throw new Error("the upload did not store");
    upload.push(performance.now() - started);
  }
  const l = median(local), u = median(upload);
  console.log(
    `${seconds} s | ${l.toFixed(0)} | ${u.toFixed(0)} | ${(u / l).toFixed(2)} | ${bytes} | ` +
      `${(bytes / 1e6 / (u / 1000)).toFixed(1)}`,
  );
}
await api.close();
await s3.stop();
Deno.exit(0);
