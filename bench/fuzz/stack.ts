// The service the worker-side surfaces are fuzzed against: the API in this process (to mint
// sessions), one real worker process with the local speech engines (the process under test:
// its crashes, error lines and memory are watched), an echo agent and, when given, an agent whose
// brain is the fuzzer's own WebSocket server.
import {
  makeTenant,
  startTestApi,
  type Tenant,
  type TestApi,
} from "../../tests/helpers/api_server.ts";
import { type BenchWorker, startBenchWorker } from "../harness/worker.ts";
import { connectSession } from "../harness/session.ts";
import { settingOrCreate } from "../../db/service_settings.ts";
import { TokenSigner } from "../../common/token.ts";
import { TestCaller } from "../../caller/caller.ts";

export interface Session {
  session_id: string;
  endpoint: string;
  token: string;
}

export interface WorkerHealth {
  exited: boolean;
  /** Requests the worker answered 500 internal_error (it logs each as "unexpected error"). */
  unexpectedErrors: number;
  /** "Uncaught" lines: an unhandled rejection or error (Deno then exits). */
  uncaught: number;
  /** The first few such lines. */
  lines: string[];
}

export interface Stack {
  api: TestApi;
  worker: BenchWorker;
  echo: Tenant;
  brain?: Tenant;
  signer: TokenSigner;
  connect(tenant: Tenant, body?: Record<string, unknown>): Promise<Session>;
  /** A running echo call through a real WebRTC connection. */
  call(tenant: Tenant): Promise<{ caller: TestCaller; session: Session }>;
  workerRss(): Promise<number>;
  health(): WorkerHealth;
  close(): Promise<void>;
}

export async function startStack(
  options: { brainUrl?: string; workerEnv?: Record<string, string> } = {},
): Promise<Stack> {
  const api = await startTestApi({
    RATE_LIMIT_PER_SECOND: "0",
    RATE_LIMIT_PER_ADDRESS_PER_SECOND: "0",
    PENDING_SESSIONS_PER_KEY: "0",
  }, { node: false });
  let worker: BenchWorker | undefined;
  const callers: TestCaller[] = [];
  try {
    worker = await startBenchWorker(api.db.url, {
      nodeId: `node-fuzz-${crypto.randomUUID().slice(0, 6)}`,
      // Every accepted offer takes a slot until its call ends (20 s without a connection).
      env: { WORKER_CAPACITY: "100000", ...options.workerEnv },
    });
    let exited = false;
    worker.child.process.status.then(() => (exited = true));
    const echo = await makeTenant(api, "fuzz-echo", { brain_url: "echo:" });
    const brain = options.brainUrl
      ? await makeTenant(api, "fuzz-brain", { brain_url: options.brainUrl })
      : undefined;
    const signer = await TokenSigner.fromJwk(
      await settingOrCreate(api.db.sql, "token_signing_key", () => "unused"),
    );
    const w = worker;
    const connect = async (tenant: Tenant, body: Record<string, unknown> = {}) => {
      const s = await connectSession(api, tenant, body);
      return {
        session_id: s.sessionId,
        endpoint: s.endpoint,
        token: s.headers.Authorization.slice(7),
      };
    };
    return {
      api,
      worker: w,
      echo,
      brain,
      signer,
      connect,
      async call(tenant) {
        const session = await connect(tenant);
        const caller = await TestCaller.connect({
          offerUrl: session.endpoint,
          headers: { Authorization: `Bearer ${session.token}` },
        });
        callers.push(caller);
        await caller.ready();
        return { caller, session };
      },
      async workerRss() {
        const res = await fetch(`${w.url}/stats`);
        const stats = await res.json();
        return stats.memory.rss_bytes as number;
      },
      health() {
        const lines = w.child.output().split("\n");
        const unexpected = lines.filter((l) => l.includes("unexpected error"));
        const uncaught = lines.filter((l) => /Uncaught|panicked/.test(l));
        return {
          exited,
          unexpectedErrors: unexpected.length,
          uncaught: uncaught.length,
          lines: [...uncaught, ...unexpected].slice(0, 6),
        };
      },
      async close() {
        for (const c of callers) await c.hangUp().catch(() => {});
        await w.stop();
        await api.close();
      },
    };
  } catch (err) {
    await worker?.stop();
    await api.close();
    throw err;
  }
}
