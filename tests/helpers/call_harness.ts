// A whole service for call tests: the API in this process, a real worker process with the local
// speech engines, a brain served by the brain SDK in this process, and test callers that dial
// sessions through sessions.connect exactly as a page would.
import type { Brain } from "../../sdk/brain/mod.ts";
import { makeTenant, startTestApi, type Tenant, type TestApi } from "./api_server.ts";
import { startWorkerProcess, type WorkerProcess } from "./process.ts";
import { TestCaller } from "../../caller/caller.ts";
import { readWav, rms, to48k } from "../../caller/wav.ts";
import { callerSpeechWav } from "./audio.ts";

export interface LogEntry {
  at: string;
  source: string;
  kind: string;
  // deno-lint-ignore no-explicit-any
  data: any;
}

export interface CallService {
  api: TestApi;
  worker: WorkerProcess;
  tenant: Tenant;
  brainUrl: string;
  /** sessions.connect with the tenant's secret key, then the offer; resolves at bot-ready. */
  call(body?: Record<string, unknown>): Promise<{ caller: TestCaller; sessionId: string }>;
  /** The session record once its status is `status`. */
  // deno-lint-ignore no-explicit-any
  record(sessionId: string, status?: string, ms?: number): Promise<any>;
  /** The session's log so far (the worker writes it in batches every 500 ms). */
  log(sessionId: string): Promise<LogEntry[]>;
  close(): Promise<void>;
}

export async function startCallService(
  brain: Brain,
  options: { record_by_default?: boolean; workerEnv?: Record<string, string> } = {},
): Promise<CallService> {
  const served = brain.serve({ hostname: "127.0.0.1", port: 0, path: "/brain" });
  const api = await startTestApi({}, { node: false });
  let worker: WorkerProcess | undefined;
  const callers: TestCaller[] = [];
  try {
    worker = await startWorkerProcess(api.db.url, undefined, {
      RECORDINGS_DIR: await Deno.makeTempDir({ prefix: "recordings-" }),
      ...options.workerEnv,
    });
    const tenant = await makeTenant(api, "acme", {
      brain_url: served.url,
      record_by_default: options.record_by_default,
    });
    const service: CallService = {
      api,
      worker,
      tenant,
      brainUrl: served.url,
      async call(body = {}) {
        const r = await api.post(
          "/api/v1/sessions.connect",
          { agent_id: tenant.agent_id, ...body },
          tenant.sk,
        );
        if (r.status !== 200) throw new Error(`connect: ${r.status} ${JSON.stringify(r.body)}`);
        const params = r.body.webrtc_request_params;
        const caller = await TestCaller.connect({
          offerUrl: params.endpoint,
          headers: params.headers,
        });
        callers.push(caller);
        await caller.ready();
        caller.openMicrophone();
        return { caller, sessionId: r.body.session_id };
      },
      async record(sessionId, status, ms = 15_000) {
        const until = Date.now() + ms;
        for (;;) {
          const r = await api.admin("/api/v1/sessions.get", { session_id: sessionId });
          if (!status || r.body.status === status) return r.body;
          if (Date.now() > until) {
            throw new Error(
              `session is ${r.body.status}, not ${status}\n${worker!.child.output()}`,
            );
          }
          await new Promise((res) => setTimeout(res, 100));
        }
      },
      async log(sessionId) {
        const r = await api.admin("/api/v1/sessions.get", { session_id: sessionId });
        return r.body.log;
      },
      async close() {
        for (const c of callers) await c.hangUp().catch(() => {});
        await worker!.stop();
        await api.close();
        await served.shutdown();
      },
    };
    return service;
  } catch (err) {
    await worker?.stop();
    await api.close();
    await served.shutdown();
    throw err;
  }
}

/** `text` spoken by festival as 48 kHz PCM, ready for `caller.say()`. */
export async function speech(text: string): Promise<Int16Array> {
  return to48k(await readWav(await callerSpeechWav(text, 0.05)));
}

/** Polls the session log until an entry matches; returns it. */
export async function waitForLog(
  service: CallService,
  sessionId: string,
  match: (e: LogEntry) => boolean,
  ms = 15_000,
): Promise<LogEntry> {
  const until = Date.now() + ms;
  for (;;) {
    const hit = (await service.log(sessionId)).find(match);
    if (hit) return hit;
    if (Date.now() > until) {
      const kinds = (await service.log(sessionId)).map((e) => `${e.source}:${e.kind}`);
      throw new Error(`no such log entry after ${ms} ms; log: ${kinds.join(" ")}`);
    }
    await new Promise((r) => setTimeout(r, 150));
  }
}

/** When the caller first heard the bot after `since` (a frame louder than `level`). */
export function botAudioAfter(caller: TestCaller, since: number, level = 300): number | undefined {
  return caller.heardFrames.find((f) => f.at >= since && f.rms > level)?.at;
}

/** Where speech begins in 48 kHz `pcm`: the start of its first 10 ms louder than `level`, in ms. */
export function speechOnsetMs(pcm: Int16Array, level = 300): number {
  let ms = 0;
  while (ms * 48 < pcm.length && rms(pcm, ms * 48, (ms + 10) * 48) < level) ms += 10;
  return ms;
}

/** When the caller's received audio went quiet (5 frames in a row under `level`) after `since`. */
export function botSilentAt(caller: TestCaller, since: number, level = 100): number | undefined {
  const after = caller.heardFrames.filter((f) => f.at >= since);
  return after.find((_f, i) => after.slice(i, i + 5).every((g) => g.rms < level))?.at;
}
