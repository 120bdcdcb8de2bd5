// The worker's side of recordings in the customer's bucket (issue 37, docs/storage.md). When a
// recorded call of an agent with a bucket ends, `noteRecording` writes a durable pending row
// (db/agent_storage.ts) before the end is recorded; the API signs it (short-lived presigned PUT
// URLs, api/storage/signer.ts), and this loop PUTs the WAV and the transcript JSON to those URLs,
// then points the record at the object and removes the local file. A failed upload keeps the
// file, counts the attempt, waits (exponential backoff with jitter, from the row's attempt count,
// so a restarted worker goes on where the last one was), and says so in the session log and the
// log; nothing is dropped. The worker never holds the bucket's credentials.
import type { Pool, Sql } from "../../db/client.ts";
import {
  addUpload,
  agentHasBucket,
  claimUploads,
  markFailed,
  markStored,
  type RecordingUpload,
  uploadWaitMs,
} from "../../db/agent_storage.ts";
import { appendEvents } from "../../db/events.ts";
import { logger } from "../../common/log.ts";
import { storedTranscript } from "./transcript_json.ts";
import type { TurnRecord } from "./turn_record.ts";
import { type BackoffPolicy, pause } from "./retry.ts";

const log = logger("recording-store");

/** Between failed uploads: 2 s, 4 s, ... then every 5 minutes, for as long as it takes. */
export const UPLOAD_RETRY: BackoffPolicy = { firstMs: 2000, maxMs: 300_000, jitter: 0.2 };

/** What a stored recording reports: the hook point for the `recording.stored` webhook. */
export interface StoredRecording {
  session_id: string;
  agent_id: string;
  url: string;
  wav_key: string;
  json_key: string;
  bytes: number;
  attempts: number;
}

/**
 * Called by the call when its recording is closed: a durable pending upload when the agent has a
 * bucket (true), nothing otherwise (false). A database error is the caller's to log: the file stays.
 */
export async function noteRecording(
  sql: Sql,
  r: { session_id: string; agent_id: string; local_path: string },
): Promise<boolean> {
  if (!await agentHasBucket(sql, r.agent_id)) return false;
  await addUpload(sql, r);
  noted.dispatchEvent(new Event("noted"));
  return true;
}

/** Wakes this process's uploaders when a call notes a recording (they sleep long when idle). */
const noted = new EventTarget();

export interface UploaderOptions {
  sql: Pool;
  /** This worker's RECORDINGS_DIR: it uploads only files it can read there. */
  recordingsDir: string;
  retry?: BackoffPolicy;
  /**
   * The longest sleep between passes (ms; default 60 s): a note from a call in this process wakes
   * it at once, and a pending upload (another worker's restart, a backoff) is looked at when due.
   * Idle, it costs two plain reads a minute rather than one a second.
   */
  idleMs?: number;
  /** Told once per stored recording, after the record points at the object. */
  onStored?: (s: StoredRecording) => void | Promise<void>;
  fetch?: typeof fetch;
}

export class RecordingUploader {
  #stop = new AbortController();
  #loop?: Promise<void>;
  #busy?: Promise<number>;
  /** Counters for the node's metrics and the bench. */
  stored = 0;
  failed = 0;
  bytes = 0;

  constructor(private o: UploaderOptions) {}

  start(): void {
    const idle = this.o.idleMs ?? 60_000;
    this.#loop ??= (async () => {
      while (!this.#stop.signal.aborted) {
        let wait = 1000;
        try {
          await this.runOnce();
          wait = await uploadWaitMs(this.o.sql, this.o.recordingsDir, idle);
        } catch (err) {
          log.warn("recording uploads could not be read", { cause: (err as Error).message });
        }
        const wake = new AbortController();
        const onNote = () => wake.abort();
        const onStop = () => wake.abort();
        noted.addEventListener("noted", onNote);
        this.#stop.signal.addEventListener("abort", onStop);
        if (this.#stop.signal.aborted) wake.abort();
        await pause(wait, wake.signal);
        noted.removeEventListener("noted", onNote);
        this.#stop.signal.removeEventListener("abort", onStop);
      }
    })();
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#loop;
    await this.#busy;
  }

  /** One pass: every due, signed upload whose file is here. Returns how many were stored. */
  runOnce(): Promise<number> {
    const run = async () => {
      let n = 0;
      for (const u of await claimUploads(this.o.sql, this.o.recordingsDir, 600)) {
        if (await this.#upload(u)) n++;
      }
      return n;
    };
    const p = (this.#busy ?? Promise.resolve(0)).then(run, run);
    this.#busy = p.catch(() => 0);
    return p;
  }

  async #upload(
    u: RecordingUpload & { turns: unknown; started_at: Date | null; ended_at: Date | null },
  ): Promise<boolean> {
    const put = this.o.fetch ?? fetch;
    let bytes = 0;
    let wavInfo = { bytes: 0, seconds: 0 };
    try {
      const wav = await Deno.readFile(u.local_path);
      wavInfo = wavLength(wav);
      const json = new TextEncoder().encode(JSON.stringify(storedTranscript({
        ...u,
        turns: (u.turns ?? []) as TurnRecord[],
      })));
      for (
        const [url, body, type] of [
          [u.wav_put_url!, wav, "audio/wav"],
          [u.json_put_url!, json, "application/json"],
        ] as const
      ) {
        const r = await put(url, { method: "PUT", body, headers: { "content-type": type } });
        const text = await r.text();
        if (!r.ok) throw new Error(`the bucket answered ${r.status}: ${s3Error(text)}`);
        bytes += body.length;
      }
    } catch (err) {
      await this.#failed(u, (err as Error).message);
      return false;
    }
    await markStored(this.o.sql, u.session_id, u.object_url!, wavInfo);
    await Deno.remove(u.local_path).catch((err) =>
      log.warn("stored recording's local copy not removed", {
        session_id: u.session_id,
        cause: (err as Error).message,
      })
    );
    const stored: StoredRecording = {
      session_id: u.session_id,
      agent_id: u.agent_id,
      url: u.object_url!,
      wav_key: u.wav_key,
      json_key: u.json_key,
      bytes,
      attempts: u.attempts + 1,
    };
    this.stored++;
    this.bytes += bytes;
    const { session_id: _s, agent_id: _a, ...data } = stored;
    await appendEvents(this.o.sql, [
      { session_id: u.session_id, source: "worker", kind: "recording_stored", data },
    ]).catch(() => {});
    log.info("recording stored in the agent's bucket", { session_id: u.session_id, bytes });
    await this.o.onStored?.(stored);
    return true;
  }

  async #failed(u: RecordingUpload, error: string): Promise<void> {
    const { firstMs, maxMs, factor = 2, jitter = 0.2 } = this.o.retry ?? UPLOAD_RETRY;
    const base = Math.min(maxMs, firstMs * factor ** Math.min(u.attempts, 40));
    const waitMs = base * (1 + jitter * (2 * Math.random() - 1));
    const retryIn = Math.round(waitMs) / 1000;
    this.failed++;
    await markFailed(this.o.sql, u.session_id, error, retryIn);
    await appendEvents(this.o.sql, [{
      session_id: u.session_id,
      source: "worker",
      kind: "recording_upload_failed",
      data: { error, attempts: u.attempts + 1, retry_in_seconds: retryIn },
    }]);
    log.warn("recording upload failed; kept locally, retrying", {
      session_id: u.session_id,
      attempts: u.attempts + 1,
      retry_in_seconds: retryIn,
      cause: error,
    });
  }
}

/** The S3 error's code and message, not its whole XML (which may echo the string to sign). */
function s3Error(xml: string): string {
  const code = /<Code>([^<]*)<\/Code>/.exec(xml)?.[1];
  const message = /<Message>([^<]*)<\/Message>/.exec(xml)?.[1];
  return code ? `${code}${message ? ` (${message})` : ""}` : xml.slice(0, 200) || "no body";
}

/** A WAV file's size and length, from its header's byte rate (recording.stored reports both). */
export function wavLength(wav: Uint8Array): { bytes: number; seconds: number } {
  if (wav.length < 44) return { bytes: wav.length, seconds: 0 };
  const byteRate = new DataView(wav.buffer, wav.byteOffset, wav.byteLength).getUint32(28, true);
  const seconds = byteRate > 0 ? (wav.length - 44) / byteRate : 0;
  return { bytes: wav.length, seconds: Math.round(seconds * 100) / 100 };
}
