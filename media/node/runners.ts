// Every core of a node: with WORKER_PROCESSES above 1 (or `auto`), `deno task worker` is a
// supervisor that starts one call runner process per core. Each runner is a whole worker of old
// (media/main.ts with WORKER_RUNNER_INDEX set): its own HTTP port (WORKER_PORT + i), its own
// ICE sockets (werift binds each call's UDP sockets to ephemeral ports, so runners never clash),
// and its own node row (`${NODE_ID}-r${i}`, offer URL = WORKER_PUBLIC_URL's host, port + i).
//
// Separate registrations rather than one node with the summed capacity: the API's least-loaded
// choice then spreads calls over the runners with no change, a runner's slots are its own (one
// summed row would need the supervisor to route offers between runners), and a runner that dies
// fails only its own calls (its row's sessions, `worker_restarted` when it comes back or
// `worker_lost` when its heartbeat goes stale), exactly as a whole worker's restart does.
//
// The supervisor restarts a runner that dies (at most MAX_RESTARTS a minute, as the engine
// threads), forwards SIGTERM/SIGINT to every runner and exits when they all have. It has no HTTP
// port: each runner answers its own /healthz and /readyz, and runner 0's port is WORKER_PORT, so
// probes aimed at WORKER_PORT keep working. Runner logs pass through the supervisor, tagged with
// `runner=i` (a `runner` field in JSON lines).
import { logger } from "../../common/log.ts";
import type { Settings } from "../../common/settings.ts";

const log = logger("supervisor");

/** A runner that died this many times within a minute is left down. */
export const MAX_RESTARTS = 5;
const RESTART_WINDOW_MS = 60_000;
const RESTART_DELAY_MS = 500;
/**
 * Share of a runner's cores its calls may use on average: the rest is headroom for bursts (every
 * caller speaking at once), so pacing never starves and no frame is skipped.
 */
export const TARGET_UTILISATION = 0.75;
/** The environment variable that makes media/main.ts a runner, set by the supervisor only. */
export const RUNNER_INDEX_VAR = "WORKER_RUNNER_INDEX";

export interface RunnerPlan {
  index: number;
  nodeId: string;
  port: number;
  publicUrl: string;
  metricsPort?: number;
  /** SIP_PORT + index: each runner is a node of its own to the redirect, with its own SIP port. */
  sipPort?: number;
  capacity: number;
}

/** The runner count WORKER_PROCESSES asks for on a machine with `cores` cores. */
export function runnerCount(processes: Settings["workerProcesses"], cores: number): number {
  return processes === "auto" ? Math.max(1, cores) : processes;
}

/** Calls a runner with `cores` cores takes when each costs `costCores`: at least 1. */
export function derivedCapacity(cores: number, costCores: number): number {
  return Math.max(1, Math.floor(cores * TARGET_UTILISATION / costCores + 1e-9));
}

/**
 * Each runner's capacity: WORKER_CAPACITY split evenly (the first runners take the remainder,
 * each at least 1), or, unset, derived from the cores each runner has and the cost of a call.
 * One process with WORKER_PROCESSES unset keeps WORKER_CAPACITY's default, 50, as before.
 */
export function runnerCapacities(settings: Settings, runners: number, cores: number): number[] {
  const derive = !settings.workerCapacitySet &&
    (runners > 1 || settings.workerProcesses === "auto");
  if (derive) {
    return Array(runners).fill(derivedCapacity(cores / runners, settings.workerCallCostCores));
  }
  const each = Math.floor(settings.workerCapacity / runners);
  const extra = settings.workerCapacity % runners;
  return Array.from({ length: runners }, (_, i) => Math.max(1, each + (i < extra ? 1 : 0)));
}

/**
 * Runner `index`'s offer base URL: the node's public URL with its port moved up by `index` (the
 * scheme's default port when it names none), path kept. A TLS terminator or NAT in front must map
 * public port P + i to WORKER_PORT + i.
 */
export function runnerPublicUrl(base: string, index: number): string {
  const url = new URL(base);
  const port = url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
  url.port = String(port + index);
  const path = url.pathname.replace(/\/+$/, "");
  return `${url.protocol}//${url.host}${path}`;
}

/** The runners of this node. `cores`: navigator.hardwareConcurrency. */
export function planRunners(settings: Settings, cores: number): RunnerPlan[] {
  const count = runnerCount(settings.workerProcesses, cores);
  const base = settings.nodeId ?? `node-${Deno.hostname()}-${settings.workerPort}`;
  const publicUrl = settings.workerPublicUrl ?? `http://127.0.0.1:${settings.workerPort}`;
  const capacities = runnerCapacities(settings, count, cores);
  return capacities.map((capacity, index) => ({
    index,
    nodeId: `${base}-r${index}`,
    port: settings.workerPort + index,
    publicUrl: runnerPublicUrl(publicUrl, index),
    metricsPort: settings.metricsPort === undefined ? undefined : settings.metricsPort + index,
    sipPort: settings.sipPort === undefined ? undefined : settings.sipPort + index,
    capacity,
  }));
}

/**
 * Recognition threads a runner starts: 1 when the node has several runners. N runners on N cores
 * already keep one main thread busy per core (WebRTC, Opus, VAD, pacing: ~36 % of a call's CPU);
 * a second recognition thread each would put 3N busy threads on N cores. One per runner is enough
 * for its few calls (a speaking caller costs ~0.1 of a core) and holds half the decoders' memory.
 */
export function recognitionThreads(runners: number): number | undefined {
  return runners > 1 ? 1 : undefined;
}

/** The environment a runner starts with: the node's, with the runner's own port, id and URL. */
export function runnerEnv(
  env: Record<string, string>,
  plan: RunnerPlan,
  runners: number,
): Record<string, string> {
  const out: Record<string, string> = {
    ...env,
    [RUNNER_INDEX_VAR]: String(plan.index),
    WORKER_PROCESSES: String(runners),
    WORKER_PORT: String(plan.port),
    NODE_ID: plan.nodeId,
    WORKER_PUBLIC_URL: plan.publicUrl,
    WORKER_CAPACITY: String(plan.capacity),
  };
  if (plan.metricsPort !== undefined) out.METRICS_PORT = String(plan.metricsPort);
  if (plan.sipPort !== undefined) out.SIP_PORT = String(plan.sipPort);
  return out;
}

/** A runner's output line, tagged with its index. */
export function tagLine(line: string, index: number): string {
  if (line.startsWith("{")) {
    try {
      const obj = JSON.parse(line);
      if (obj && typeof obj === "object" && !Array.isArray(obj)) {
        return JSON.stringify({ ...obj, runner: index });
      }
    } catch { /* not a log line: tagged as text below */ }
  }
  if (/^\d{4}-\d\d-\d\dT\S+ (info|warn|error) \[/.test(line)) return `${line} runner=${index}`;
  return `[runner ${index}] ${line}`;
}

async function relay(
  stream: ReadableStream<Uint8Array>,
  index: number,
  write: (line: string) => void,
): Promise<void> {
  let rest = "";
  const decoder = new TextDecoder();
  for await (const chunk of stream) {
    rest += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = rest.indexOf("\n")) >= 0) {
      write(tagLine(rest.slice(0, nl), index));
      rest = rest.slice(nl + 1);
    }
  }
  rest += decoder.decode();
  if (rest) write(tagLine(rest, index));
}

export interface Supervisor {
  /** Forwards the signal to every runner; no runner is restarted from then on. */
  stop(signal: "SIGTERM" | "SIGINT"): void;
  /**
   * Settles when every runner has exited after stop() (0 if each exited 0, else 1), or when every
   * runner died more than MAX_RESTARTS times a minute (1).
   */
  done: Promise<number>;
  /** The process id of runner `index` while it runs. */
  pid(index: number): number | undefined;
}

/** Starts the runners of `plans` (`deno run -A <script>` each) and keeps them running. */
export function superviseRunners(
  plans: RunnerPlan[],
  options: { script: string; env: Record<string, string>; args?: string[] },
): Supervisor {
  let stopping: "SIGTERM" | "SIGINT" | undefined;
  let finish!: (code: number) => void;
  const done = new Promise<number>((resolve) => (finish = resolve));
  const runners = plans.map((plan) => ({
    plan,
    child: undefined as Deno.ChildProcess | undefined,
    restarts: [] as number[],
    timer: undefined as ReturnType<typeof setTimeout> | undefined,
    /** Ended for good: stopped, or out of restarts. */
    over: false,
    failed: false,
  }));
  const settle = () => {
    if (!runners.every((r) => r.over)) return;
    finish(stopping && !runners.some((r) => r.failed) ? 0 : 1);
  };
  const start = (r: (typeof runners)[number]) => {
    r.timer = undefined;
    const { plan } = r;
    const child = new Deno.Command(Deno.execPath(), {
      args: [...(options.args ?? ["run", "-A"]), options.script],
      env: runnerEnv(options.env, plan, plans.length),
      // The runner reads its stdin only to see it close: the supervisor is gone (even SIGKILLed),
      // so it drains and exits rather than run on unsupervised.
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    r.child = child;
    log.info("runner started", {
      runner: plan.index,
      pid: child.pid,
      node_id: plan.nodeId,
      port: plan.port,
      capacity: plan.capacity,
    });
    const output = Promise.all([
      relay(child.stdout, plan.index, (l) => console.log(l)),
      relay(child.stderr, plan.index, (l) => console.error(l)),
    ]).catch(() => {});
    child.status.then(async (status) => {
      await output;
      r.child = undefined;
      if (stopping) {
        log.info("runner exited", { runner: plan.index, code: status.code });
        r.over = true;
        r.failed = status.code !== 0;
        return settle();
      }
      const now = Date.now();
      r.restarts = r.restarts.filter((t) => now - t < RESTART_WINDOW_MS);
      if (r.restarts.length >= MAX_RESTARTS) {
        log.error("runner keeps dying; left down", {
          runner: plan.index,
          code: status.code,
          signal: status.signal ?? undefined,
          restarts_per_minute: r.restarts.length,
        });
        r.over = true;
        r.failed = true;
        return settle();
      }
      r.restarts.push(now);
      log.error("runner died; restarting it", {
        runner: plan.index,
        code: status.code,
        signal: status.signal ?? undefined,
      });
      r.timer = setTimeout(() => start(r), RESTART_DELAY_MS);
    });
  };
  runners.forEach(start);
  return {
    stop(signal) {
      stopping ??= signal;
      for (const r of runners) {
        if (r.timer !== undefined) {
          clearTimeout(r.timer);
          r.timer = undefined;
          r.over = true; // it was down, waiting to restart: nothing to drain
        }
        try {
          r.child?.kill(signal);
        } catch { /* exiting already */ }
      }
      log.info("stopping runners", { signal, running: runners.filter((r) => r.child).length });
      settle();
    },
    done,
    pid: (index) => runners[index]?.child?.pid,
  };
}

/** Resolves when the supervisor's end of this runner's stdin closes (the supervisor is gone). */
export async function supervisorGone(): Promise<void> {
  try {
    for await (const _ of Deno.stdin.readable) { /* nothing is ever written */ }
  } catch { /* closed */ }
}
