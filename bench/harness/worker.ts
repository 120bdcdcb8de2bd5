// The worker under a bench: a real media/main.ts process, from this checkout or another (to
// measure before against after in one run), registered in the bench's database before it is used.
import {
  type Child,
  freePort,
  startWorkerProcess,
  type WorkerProcess,
} from "../../tests/helpers/process.ts";
import { pinTo } from "./proc.ts";

/** This checkout: the default worker. */
export const HERE = new URL("../..", import.meta.url).pathname;

export interface BenchWorker {
  url: string;
  pid: number;
  nodeId: string;
  child: Child;
  /** The worker's inspector (`inspect: true`), for a profiler or a heap census. */
  inspectPort?: number;
  stop(): Promise<Deno.CommandStatus>;
}

export interface BenchWorkerOptions {
  /** The checkout whose media/main.ts runs (default: this one). */
  root?: string;
  nodeId?: string;
  /** Settings over the test worker's (loopback ICE, 2 s drain, recordings in a temporary folder). */
  env?: Record<string, string>;
  /** Start it under `--inspect` on a free port. */
  inspect?: boolean;
  /** taskset its threads onto these CPUs ("0"); it is stopped and this throws if that fails. */
  pin?: string;
}

/** Starts a worker on a free port and returns once it is healthy and registered as serving. */
export async function startBenchWorker(
  databaseUrl: string,
  o: BenchWorkerOptions = {},
): Promise<BenchWorker> {
  const root = o.root ?? HERE;
  const inspectPort = o.inspect ? freePort() : undefined;
  const env = {
    RECORDINGS_DIR: await Deno.makeTempDir({ prefix: "bench-recordings-" }),
    ...o.env,
  };
  // startWorkerProcess spawns media/main.ts of the current directory before its first await.
  const here = Deno.cwd();
  Deno.chdir(root);
  let started: Promise<WorkerProcess>;
  try {
    started = startWorkerProcess(
      databaseUrl,
      o.nodeId,
      env,
      inspectPort ? [`--inspect=127.0.0.1:${inspectPort}`] : [],
    );
  } finally {
    Deno.chdir(here);
  }
  const w = await started;
  const pid = w.child.process.pid;
  try {
    // A worker from the wrong checkout would measure the wrong code without a sign.
    const cwd = Deno.realPathSync(`/proc/${pid}/cwd`);
    if (cwd !== Deno.realPathSync(root)) throw new Error(`worker runs in ${cwd}, not ${root}`);
    if (o.pin && !pinTo(pid, o.pin)) throw new Error("taskset failed");
  } catch (e) {
    await w.stop("SIGKILL");
    throw e;
  }
  return { ...w, pid, inspectPort, stop: () => w.stop() };
}

/** Waits (up to `ms`) until no runner at `urls` holds a call: the next level starts on an empty node. */
export async function waitNoCalls(urls: string[], ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const calls = await Promise.all(urls.map(async (u) => {
      try {
        return ((await (await fetch(`${u}/stats`)).json()) as { calls: number }).calls;
      } catch {
        return 0; // a runner that no longer answers holds nothing
      }
    }));
    if (calls.every((n) => n === 0)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Extra worker settings from a variable holding `K=V K2=V2` (BENCH_WORKER_ENV, SOAK_WORKER_ENV). */
export function workerEnvFrom(name: string): Record<string, string> {
  return Object.fromEntries(
    (Deno.env.get(name) ?? "").split(/\s+/).filter((s) => s.includes("=")).map((s) => {
      const i = s.indexOf("=");
      return [s.slice(0, i), s.slice(i + 1)];
    }),
  );
}
