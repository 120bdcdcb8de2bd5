// Child processes of this project (an API, a worker) for tests that need more than one process.
export function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
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

/** A real worker process (`media/main.ts`) on a free port, registered in `databaseUrl`. */
export async function startWorkerProcess(
  databaseUrl: string,
  nodeId = `node-${crypto.randomUUID().slice(0, 8)}`,
  env: Record<string, string> = {},
): Promise<WorkerProcess> {
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawnDeno("media/main.ts", {
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
  // Registration is written just after the server listens.
  const until = Date.now() + 10_000;
  const pg = (await import("postgres")).default(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    while (Date.now() < until) {
      const rows = await pg`select 1 from worker_nodes where id = ${nodeId} and not draining`;
      if (rows.length) break;
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    await pg.end();
  }
  return { url, nodeId, child, stop: (signal) => child.stop(signal) };
}
