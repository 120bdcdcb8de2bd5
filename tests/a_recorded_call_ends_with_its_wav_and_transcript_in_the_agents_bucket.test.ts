// Issue 37, the whole call: a recorded call on an agent with a bucket (a real S3 server checking
// Signature V4) ends with the WAV and the per-turn transcript JSON in the bucket, the worker's
// local copy gone and the session record pointing at the object; the worker never had the
// bucket's secret (it uploads to URLs the API presigned).
import assert from "node:assert/strict";
import { startCallService } from "./helpers/call_harness.ts";
import { S3_ACCESS_KEY_ID, S3_SECRET, startS3Server } from "./helpers/s3_server.ts";
import { createBrain } from "../sdk/brain/mod.ts";
import { newSealingKeyText } from "../common/sealed.ts";
import { startWorkerProcess, type WorkerProcess } from "./helpers/process.ts";
import { waitForLog } from "./helpers/call_harness.ts";

Deno.test("a recorded call ends with its WAV and transcript in the agent's bucket", async () => {
  const s3 = await startS3Server("calls");
  const recordings = await Deno.makeTempDir({ prefix: "recordings-" });
  const brain = createBrain({
    onSessionStart: (session) => {
      setTimeout(() => session.end("done"), 1500);
      return "Hello, this call is recorded.";
    },
    onTurn: () => "",
  });
  const service = await startCallService(brain, {
    record_by_default: true,
    apiEnv: { TRUNK_CREDENTIALS_KEY: newSealingKeyText() },
    workerEnv: { RECORDINGS_DIR: recordings },
  });
  try {
    const agent = service.tenant.agent_id;
    const set = await service.api.admin("/api/v1/storage.set", {
      agent_id: agent,
      bucket: "calls",
      prefix: "acme",
      endpoint: s3.endpoint,
      access_key_id: S3_ACCESS_KEY_ID,
      secret_access_key: S3_SECRET,
    });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    const { sessionId } = await service.call();
    await service.record(sessionId, "ended", 20_000);
    const key = `acme/${agent}/${sessionId}`;
    const until = Date.now() + 15_000;
    let record = await service.record(sessionId);
    while (!record.recording?.url?.startsWith(s3.endpoint) && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 200));
      record = await service.record(sessionId);
    }
    assert.equal(record.recording?.url, `${s3.endpoint}/calls/${key}.wav`);
    const wav = await s3.object("calls", `${key}.wav`);
    assert.ok(wav && wav.length > 44 + 16000 * 4, "at least a second of two-channel audio");
    assert.equal(new TextDecoder().decode(wav.subarray(0, 4)), "RIFF");
    const json = JSON.parse(new TextDecoder().decode(await s3.object("calls", `${key}.json`)));
    assert.equal(json.session_id, sessionId);
    assert.equal(json.turns[0].trigger, "greeting");
    assert.match(json.turns[0].bot.map((u: { text: string }) => u.text).join(" "), /recorded/);
    const left = [...Deno.readDirSync(recordings)].map((e) => e.name);
    assert.deepEqual(left, [], "the local copy is removed once stored");
    const kinds = (await service.log(sessionId)).map((e) => e.kind);
    assert.ok(kinds.includes("recording_stored"), kinds.join(" "));
  } finally {
    await service.close();
    await s3.stop();
  }
});

Deno.test("a bucket down at the end of a call, and the worker killed, still gets the recording", async () => {
  const s3 = await startS3Server("calls");
  const recordings = await Deno.makeTempDir({ prefix: "recordings-" });
  const brain = createBrain({
    onSessionStart: (session) => {
      setTimeout(() => session.end("done"), 1000);
      return "Hello.";
    },
    onTurn: () => "",
  });
  const service = await startCallService(brain, {
    record_by_default: true,
    apiEnv: { TRUNK_CREDENTIALS_KEY: newSealingKeyText() },
    workerEnv: { RECORDINGS_DIR: recordings },
  });
  let second: WorkerProcess | undefined;
  try {
    await service.api.admin("/api/v1/storage.set", {
      agent_id: service.tenant.agent_id,
      bucket: "calls",
      endpoint: s3.endpoint,
      access_key_id: S3_ACCESS_KEY_ID,
      secret_access_key: S3_SECRET,
    });
    await s3.stop();
    const { sessionId } = await service.call();
    await service.record(sessionId, "ended", 20_000);
    await waitForLog(service, sessionId, (e) => e.kind === "recording_upload_failed");
    // The worker dies with the upload pending; the file and the row are all that is left.
    await service.worker.stop("SIGKILL");
    assert.deepEqual([...Deno.readDirSync(recordings)].map((e) => e.name), [`${sessionId}.wav`]);
    await s3.restart();
    second = await startWorkerProcess(service.api.db.url, undefined, {
      RECORDINGS_DIR: recordings,
    });
    await waitForLog(service, sessionId, (e) => e.kind === "recording_stored", 20_000);
    const record = await service.record(sessionId);
    assert.equal(
      record.recording.url,
      `${s3.endpoint}/calls/${service.tenant.agent_id}/${sessionId}.wav`,
    );
    assert.ok(await s3.object("calls", `${service.tenant.agent_id}/${sessionId}.json`));
    assert.deepEqual([...Deno.readDirSync(recordings)], []);
  } finally {
    await second?.stop();
    await service.close();
    await s3.stop();
  }
});
