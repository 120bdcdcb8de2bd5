// A whole service for call tests: the API in this process, a real worker process with the local
// speech engines, a brain served by the brain SDK in this process, and test callers that dial
// sessions through sessions.connect exactly as a page would. `startInProcessCallService` runs the
// worker in this process instead, so a test holds its calls map and its engines, and Deno's
// sanitizers see every timer, socket and thread a call leaves behind.
import type { Brain } from "../../sdk/brain/mod.ts";
import { makeTenant, startTestApi, type Tenant, type TestApi } from "./api_server.ts";
import { startWorkerProcess, type WorkerProcess } from "./process.ts";
import { type CallerOptions, TestCaller } from "../../caller/caller.ts";
import { readWav, rms, to48k } from "../../caller/wav.ts";
import { callerSpeechWav } from "./audio.ts";
import { concat, pinkNoise } from "./test_signals.ts";
import { assert } from "./assert.ts";
import { TokenVerifier } from "../../common/token.ts";
import { signingJwk } from "../../db/signing_key.ts";
import { localEngines } from "./local_engines.ts";
import type { CallEngines } from "../../media/engines/call_engines.ts";
import { registerWorkerNode } from "../../media/node/registration.ts";
import { createWorkerApp, type WorkerContext } from "../../media/worker.ts";
import type { TelephonySettings } from "../../common/telephony_settings.ts";

/** What the harness needs of a brain: to be served (the SDK's brains, raw_brain.ts's). */
export type ServableBrain = Pick<Brain, "serve">;

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
  brain: ServableBrain,
  options: {
    record_by_default?: boolean;
    workerEnv?: Record<string, string>;
    apiEnv?: Record<string, string>;
  } = {},
): Promise<CallService> {
  const served = brain.serve({ hostname: "127.0.0.1", port: 0, path: "/brain" });
  const api = await startTestApi(options.apiEnv ?? {}, { node: false });
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
  service: Pick<CallService, "log">,
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

/**
 * Waits for the Heard of a reply the caller cut off and checks it: a strict, non-empty prefix of
 * `reply` that ends where a word ends (what follows it in `reply` matches `wordEnd`, e.g. a space
 * or punctuation). Returns the heard text.
 */
export async function heardCutOffAtWord(
  service: CallService,
  sessionId: string,
  reply: string,
  wordEnd: RegExp,
): Promise<string> {
  const heard = await waitForLog(
    service,
    sessionId,
    (e) => e.source === "to_brain" && e.kind === "heard" && e.data.cut_off === true,
  );
  const text: string = heard.data.text;
  assert(text.length > 0 && text.length < reply.length, `heard "${text}"`);
  assert(reply.startsWith(text), `heard "${text}" is not a prefix of the reply`);
  assert(wordEnd.test(reply.slice(text.length)), `heard "${text}" ends inside a word`);
  return text;
}

/** When the caller first heard the bot after `since` (a frame louder than `level`). */
export function botAudioAfter(caller: TestCaller, since: number, level = 300): number | undefined {
  return caller.heardFrames.find((f) => f.at >= since && f.rms > level)?.at;
}

/**
 * Asks the example brain for its long story and resolves when the story's first unit starts at
 * the caller (its "new" bot-output).
 */
export async function askForTheStory(caller: TestCaller, timeoutMs = 20_000): Promise<void> {
  const before = caller.messages.length;
  await caller.say(await speech("please tell me a long story"));
  await caller.waitForMessage(
    (m) =>
      caller.messages.indexOf(m) >= before && m.type === "bot-output" &&
      (m.data as { spoken_status: string }).spoken_status === "new" &&
      String((m.data as { text: string }).text).startsWith("Once upon"),
    timeoutMs,
  );
}

/**
 * After the greeting, asks for the story and waits 1.5 s into it: resolves once the caller hears
 * the bot speaking (more than 5 loud frames in its last 25), for a test to talk over it.
 */
export async function storyWellUnderWay(caller: TestCaller): Promise<void> {
  await caller.waitForMessage((m) => m.type === "bot-stopped-speaking", 15_000);
  await askForTheStory(caller);
  await new Promise((r) => setTimeout(r, 1500));
  const loud = caller.heardFrames.slice(-25).filter((f) => f.rms > 300).length;
  assert(loud > 5, "the bot was not speaking 1.5 s into the story");
}

/** Where speech begins in 48 kHz `pcm`: the start of its first 10 ms louder than `level`, in ms. */
export function speechOnsetMs(pcm: Int16Array, level = 300): number {
  let ms = 0;
  while (ms * 48 < pcm.length && rms(pcm, ms * 48, (ms + 10) * 48) < level) ms += 10;
  return ms;
}

/** Where speech ends in 48 kHz `pcm`: the end of its last 10 ms louder than `level`, in ms. */
export function speechEndMs(pcm: Int16Array, level = 300): number {
  for (let ms = Math.floor(pcm.length / 480) * 10; ms > 0; ms -= 10) {
    if (rms(pcm, (ms - 10) * 48, ms * 48) > level) return ms;
  }
  return 0;
}

/** Where the noise begins in `noiseThenWords`' audio, in ms. */
export const NOISE_AT_MS = 200;

/**
 * A caller's noise then words over the bot: NOISE_AT_MS of silence, a 200 ms pink noise burst (a
 * knock, a cough; 16 kHz samples repeated to 48 kHz), then `text` spoken by festival, at 48 kHz.
 * Festival leads the words with ~300 ms of silence, shorter than the window an empty pause needs.
 */
export async function noiseThenWords(text: string): Promise<Int16Array> {
  const noise = pinkNoise(200, -20);
  const noise48k = Int16Array.from(
    { length: noise.length * 3 },
    (_, i) => noise[Math.floor(i / 3)],
  );
  return concat(new Int16Array(48 * NOISE_AT_MS), noise48k, await speech(text));
}

/** When the caller's received audio went quiet (5 frames in a row under `level`) after `since`. */
export function botSilentAt(caller: TestCaller, since: number, level = 100): number | undefined {
  const after = caller.heardFrames.filter((f) => f.at >= since);
  return after.find((_f, i) => after.slice(i, i + 5).every((g) => g.rms < level))?.at;
}

export interface InProcessCallService extends Omit<CallService, "worker"> {
  /** The worker's context: `calls` is its calls map. */
  context: WorkerContext;
  engines: CallEngines;
  workerUrl: string;
  /** The tenant whose agent dials `brainUrl` (made on first use). */
  tenantFor(brainUrl: string): Promise<Tenant>;
  /** Like call(), as `tenant`'s agent; `callerOptions` go to the test caller (e.g. pings). */
  callAs(
    tenant: Tenant,
    body?: Record<string, unknown>,
    callerOptions?: Partial<CallerOptions>,
  ): Promise<{ caller: TestCaller; sessionId: string }>;
  /** Resolves once the worker holds no call (fails after `ms`). */
  noCalls(ms?: number): Promise<void>;
}

/**
 * The API and a worker in this process (the local engines, a node registered in the API's
 * database), `brain` served here too. Close it in the test that started it: its engines' threads
 * and the worker's server are the test's resources.
 */
export async function startInProcessCallService(
  brain: ServableBrain,
  options: { record_by_default?: boolean; telephony?: TelephonySettings } = {},
): Promise<InProcessCallService> {
  const served = brain.serve({ hostname: "127.0.0.1", port: 0, path: "/brain" });
  const api = await startTestApi({}, { node: false, telephony: options.telephony });
  const callers: TestCaller[] = [];
  let engines: CallEngines | undefined;
  let stopWorker = async () => {};
  try {
    engines = await localEngines();
    const context: WorkerContext = {
      sql: api.db.sql,
      nodeId: `node-${crypto.randomUUID().slice(0, 8)}`,
      verifier: await TokenVerifier.fromJwk(await signingJwk(api.db, api.settings)),
      iceAddresses: ["127.0.0.1"],
      calls: new Map(),
      engines,
      recordingsDir: await Deno.makeTempDir({ prefix: "recordings-" }),
      adminToken: api.adminToken,
      capacity: 10,
      telephony: options.telephony,
    };
    const ac = new AbortController();
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen: () => {} },
      createWorkerApp(context).fetch,
    );
    const workerUrl = `http://127.0.0.1:${server.addr.port}`;
    const registration = await registerWorkerNode(api.db.sql, {
      node_id: context.nodeId,
      offer_base_url: workerUrl,
      capacity: 10,
      serves: engines.serves,
    });
    stopWorker = async () => {
      const ending = [...context.calls.values()].map((c) => c.end("ended", "worker_shutdown"));
      await Promise.all(ending);
      await registration.stop();
      ac.abort();
      await server.finished;
    };
    const tenants = new Map<string, Tenant>();
    const tenantFor = async (brainUrl: string) => {
      let t = tenants.get(brainUrl);
      if (!t) {
        t = await makeTenant(api, `t${tenants.size}`, {
          brain_url: brainUrl,
          record_by_default: options.record_by_default,
        });
        tenants.set(brainUrl, t);
      }
      return t;
    };
    const tenant = await tenantFor(served.url);
    const callAs = async (
      t: Tenant,
      body: Record<string, unknown> = {},
      callerOptions: Partial<CallerOptions> = {},
    ) => {
      const r = await api.post("/api/v1/sessions.connect", { agent_id: t.agent_id, ...body }, t.sk);
      if (r.status !== 200) throw new Error(`connect: ${r.status} ${JSON.stringify(r.body)}`);
      const params = r.body.webrtc_request_params;
      const caller = await TestCaller.connect({
        ...callerOptions,
        offerUrl: params.endpoint,
        headers: params.headers,
      });
      callers.push(caller);
      await caller.ready();
      caller.openMicrophone();
      return { caller, sessionId: r.body.session_id as string };
    };
    const service: InProcessCallService = {
      api,
      tenant,
      brainUrl: served.url,
      context,
      engines,
      workerUrl,
      tenantFor,
      callAs,
      call: (body) => callAs(tenant, body),
      async record(sessionId, status, ms = 15_000) {
        const until = Date.now() + ms;
        for (;;) {
          const r = await api.admin("/api/v1/sessions.get", { session_id: sessionId });
          if (!status || r.body.status === status) return r.body;
          if (Date.now() > until) {
            throw new Error(`session is ${r.body.status}/${r.body.end_reason}, not ${status}`);
          }
          await new Promise((res) => setTimeout(res, 100));
        }
      },
      async log(sessionId) {
        const r = await api.admin("/api/v1/sessions.get", { session_id: sessionId });
        return r.body.log;
      },
      async noCalls(ms = 5000) {
        const until = Date.now() + ms;
        while (context.calls.size > 0) {
          if (Date.now() > until) throw new Error(`${context.calls.size} calls left on the worker`);
          await new Promise((res) => setTimeout(res, 50));
        }
      },
      async close() {
        for (const c of callers) await c.hangUp().catch(() => {});
        await stopWorker();
        await engines!.close();
        await api.close();
        await served.shutdown();
      },
    };
    return service;
  } catch (err) {
    for (const c of callers) await c.hangUp().catch(() => {});
    await stopWorker();
    await engines?.close();
    await api.close();
    await served.shutdown();
    throw err;
  }
}

/** Waits until `predicate` holds (polled every 20 ms), or throws `what` after `ms`. */
export async function eventually(
  predicate: () => boolean | Promise<boolean>,
  what: string,
  ms = 10_000,
): Promise<void> {
  const until = Date.now() + ms;
  while (!await predicate()) {
    if (Date.now() > until) throw new Error(`never happened: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Checks a speech turn's figures in the session record: every latency is >= 0, and the chain
 * end_of_turn + to_brain + brain + synthesis is end_to_first_audio (each is rounded to 0.1 ms).
 */
export function assertTurnLatenciesAddUp(
  turn: { turn_id: string; latency_ms: Record<string, number> },
) {
  const l = turn.latency_ms;
  const what = `${turn.turn_id}: ${JSON.stringify(l)}`;
  for (const [step, ms] of Object.entries(l)) assert(ms >= 0, `${step} is negative in ${what}`);
  for (const step of ["recognition", "end_of_turn", "to_brain", "brain", "synthesis"]) {
    assert(typeof l[step] === "number", `${step} is missing in ${what}`);
  }
  const sum = l.end_of_turn + l.to_brain + l.brain + l.synthesis;
  assert(Math.abs(sum - l.end_to_first_audio) <= 0.25, `the steps add up to ${sum} in ${what}`);
}

/**
 * A session for a phone that dials the worker itself (SIPp, as the control plane's 302 would send
 * it): the session's id and the token that goes in the INVITE's Request-URI.
 */
export async function connectPhoneSession(
  service: Pick<CallService, "api" | "tenant">,
): Promise<{ sessionId: string; token: string }> {
  const r = await service.api.post(
    "/api/v1/sessions.connect",
    { agent_id: service.tenant.agent_id },
    service.tenant.sk,
  );
  if (r.status !== 200) throw new Error(`connect: ${r.status} ${JSON.stringify(r.body)}`);
  return {
    sessionId: r.body.session_id,
    token: r.body.webrtc_request_params.headers.Authorization.replace(/^Bearer /, ""),
  };
}
