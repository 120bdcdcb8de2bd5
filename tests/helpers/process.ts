// Child processes of this project (an API, a worker) for tests that need more than one process.

/**
 * Where ports handed to a child process are drawn: just below the system's ephemeral range
 * (ip_local_port_range). A port that bind(0) gave and the test let go can be taken, before the
 * child binds it, by any process's outgoing connection or bind(0): with two test lanes
 * (tests/run.ts) a worker died on AddrInUse for its SIP port. Below the range only another draw
 * can take it.
 */
export const PORT_DRAW = (() => {
  let low = 32768;
  try {
    low = Number(Deno.readTextFileSync("/proc/sys/net/ipv4/ip_local_port_range").split(/\s+/)[0]);
  } catch { /* not Linux: its usual range */ }
  const high = Math.max(2048, low);
  return { low: Math.max(1024, high - 12_000), high };
})();

/** A random port of PORT_DRAW. */
export function drawPort(): number {
  return PORT_DRAW.low + Math.floor(Math.random() * (PORT_DRAW.high - PORT_DRAW.low));
}

/** A TCP port of PORT_DRAW free on 127.0.0.1 right now. */
export function freePort(): number {
  for (let tries = 0; tries < 200; tries++) {
    const port = drawPort();
    try {
      Deno.listen({ hostname: "127.0.0.1", port }).close();
      return port;
    } catch { /* taken: draw again */ }
  }
  throw new Error("no free TCP port below the ephemeral range");
}

export interface Child {
  process: Deno.ChildProcess;
  output(): string;
  stop(signal?: Deno.Signal): Promise<Deno.CommandStatus>;
}

/** Runs `deno run -A <script>` with `env`, collecting its output. */
export function spawnDeno(script: string, env: Record<string, string>): Child {
  return spawnDenoWith(["run", "-A", script], env);
}

/** Runs `deno <args>` (e.g. `task run`) in `cwd` with `env`, collecting its output. */
export function spawnDenoWith(args: string[], env: Record<string, string>, cwd?: string): Child {
  const process = new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    env: { NO_COLOR: "1", HOST: "127.0.0.1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let text = "";
  const decoder = new TextDecoder();
  const collect = (s: ReadableStream<Uint8Array>) =>
    s.pipeTo(new WritableStream({ write: (c) => void (text += decoder.decode(c)) }));
  const done = Promise.all([collect(process.stdout), collect(process.stderr)]);
  return {
    process,
    output: () => text,
    async stop(signal: Deno.Signal = "SIGTERM") {
      try {
        process.kill(signal);
      } catch { /* already gone */ }
      const status = await process.status;
      await done;
      return status;
    },
  };
}

/** Polls `url` until it answers 200, or throws with the child's output after `ms`. */
export async function waitHealthy(url: string, child: Child, ms = 30_000): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    try {
      const res = await fetch(url);
      await res.body?.cancel();
      if (res.ok) return;
    } catch { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} never became healthy:\n${child.output()}`);
}

export interface WorkerProcess {
  url: string;
  nodeId: string;
  child: Child;
  stop(signal?: Deno.Signal): Promise<Deno.CommandStatus>;
}

/**
 * A real worker process (`media/main.ts`) on a free port, registered in `databaseUrl`;
 * `denoFlags` go before the script (a bench's `--inspect=...`).
 */
export async function startWorkerProcess(
  databaseUrl: string,
  nodeId = `node-${crypto.randomUUID().slice(0, 8)}`,
  env: Record<string, string> = {},
  denoFlags: string[] = [],
): Promise<WorkerProcess> {
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawnDenoWith(["run", "-A", ...denoFlags, "media/main.ts"], {
    DATABASE_URL: databaseUrl,
    WORKER_PORT: String(port),
    NODE_ID: nodeId,
    WORKER_PUBLIC_URL: url,
    ICE_ADDRESSES: "127.0.0.1",
    // SIGTERM drains; a test's worker gives its calls 2 s, not the production 10 minutes.
    DRAIN_TIMEOUT_SECONDS: "2",
    ...env,
  });
  await waitHealthy(`${url}/healthz`, child);
  // Registration is written just after the server listens. A worker that never registers (one
  // that could not take its port, whose /healthz another process answered) fails here, with its
  // output, not later as a connect that finds no node.
  await waitRegistered(databaseUrl, [nodeId], child).catch(async (err) => {
    await child.stop("SIGKILL");
    throw err;
  });
  return { url, nodeId, child, stop: (signal) => child.stop(signal) };
}

/** `count` consecutive free loopback ports (a multi-runner worker takes WORKER_PORT + i). */
export function freePortRun(count: number): number {
  for (let tries = 0; tries < 50; tries++) {
    const base = freePort();
    const held: Deno.Listener[] = [];
    try {
      for (let i = 0; i < count; i++) {
        held.push(Deno.listen({ hostname: "127.0.0.1", port: base + i }));
      }
      return base;
    } catch {
      /* one of them is taken: try another base */
    } finally {
      held.forEach((l) => l.close());
    }
  }
  throw new Error(`no ${count} consecutive free ports`);
}

export interface WorkerNodeProcess {
  /** The supervisor (`deno task worker` with WORKER_PROCESSES). */
  child: Child;
  /** Each runner's node id (`${nodeId}-r${i}`) and URL. */
  runners: { nodeId: string; url: string }[];
  /** Runner `index`'s current process id, from the supervisor's last `runner started` line. */
  runnerPid(index: number): number | undefined;
  stop(signal?: Deno.Signal): Promise<Deno.CommandStatus>;
}

/**
 * A real multi-runner worker node (`media/main.ts` with WORKER_PROCESSES=`processes`) on free
 * consecutive ports, returned once every runner is healthy and registered in `databaseUrl`.
 */
export async function startWorkerNodeProcess(
  databaseUrl: string,
  processes: number,
  nodeId = `node-${crypto.randomUUID().slice(0, 8)}`,
  env: Record<string, string> = {},
): Promise<WorkerNodeProcess> {
  const port = freePortRun(processes);
  const child = spawnDeno("media/main.ts", {
    DATABASE_URL: databaseUrl,
    WORKER_PROCESSES: String(processes),
    WORKER_PORT: String(port),
    NODE_ID: nodeId,
    WORKER_PUBLIC_URL: `http://127.0.0.1:${port}`,
    ICE_ADDRESSES: "127.0.0.1",
    DRAIN_TIMEOUT_SECONDS: "2",
    ...env,
  });
  const runners = Array.from({ length: processes }, (_, i) => ({
    nodeId: `${nodeId}-r${i}`,
    url: `http://127.0.0.1:${port + i}`,
  }));
  const runnerPid = (index: number) => {
    const re = new RegExp(`runner started runner=${index} pid=(\\d+)`, "g");
    const all = [...child.output().matchAll(re)];
    return all.length ? Number(all[all.length - 1][1]) : undefined;
  };
  try {
    await Promise.all(runners.map((r) => waitHealthy(`${r.url}/healthz`, child, 60_000)));
    await waitRegistered(databaseUrl, runners.map((r) => r.nodeId), child);
  } catch (err) {
    await child.stop("SIGKILL");
    throw err;
  }
  return { child, runners, runnerPid, stop: (signal) => child.stop(signal) };
}

/** Waits until every node of `nodeIds` has a row that is not draining. */
export async function waitRegistered(
  databaseUrl: string,
  nodeIds: string[],
  child: Child,
  ms = 10_000,
): Promise<void> {
  const until = Date.now() + ms;
  const pg = (await import("postgres")).default(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    while (Date.now() < until) {
      const rows = await pg`select id from worker_nodes where id in ${pg(nodeIds)}
        and not draining`;
      if (rows.length === nodeIds.length) return;
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    await pg.end();
  }
  throw new Error(`${nodeIds.join(", ")} never all registered:\n${child.output()}`);
}
