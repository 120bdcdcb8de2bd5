// The ports of `deno task run`, `api` and `worker`, each named by the variable that sets it, so
// that a port already taken is answered with the port, its variable and the likely cause instead
// of a stack trace. The TCP ports are tried before anything starts (a run's worker binds its port
// in a child process, where an error would name neither), and every listener a run opens itself
// is wrapped too, since another program may take a port between the check and the bind.

/** A port of the process and the variable that sets it. */
export interface RunPort {
  variable: string;
  port: number;
}

/** A port is taken: the message says which, where, why it likely is, and what to do. */
export class PortTaken extends Error {
  constructor(
    readonly taken: RunPort,
    readonly host: string,
    transport = "TCP",
    /** The task this process is (run, api, worker): the example command names it. */
    task: "run" | "api" | "worker" = "run",
  ) {
    const help = task === "run" ? " (`deno task run --help` lists the variables)" : "";
    super(
      `Port ${taken.port} (${taken.variable}, ${transport} on ${host}) is already in use: most ` +
        "likely another `deno task run` (or `deno task api`/`worker`) is running on this " +
        `machine. Stop it, or give this process a free port, e.g. ${taken.variable}=${
          taken.port + 100
        } deno task ${task}${help}.`,
    );
    this.name = "PortTaken";
  }
}

/** `bind()`, with a taken port reported as PortTaken naming `port`. */
export async function bindNamed<T>(
  port: RunPort,
  host: string,
  bind: () => T | Promise<T>,
  transport = "TCP",
  task: "run" | "api" | "worker" = "run",
): Promise<T> {
  try {
    return await bind();
  } catch (err) {
    if (err instanceof Deno.errors.AddrInUse) throw new PortTaken(port, host, transport, task);
    throw err;
  }
}

/** Throws PortTaken for the first of `ports` that cannot be listened on over TCP at `host`. */
export async function checkPortsFree(
  host: string,
  ports: RunPort[],
  task: "run" | "api" | "worker" = "run",
): Promise<void> {
  for (const p of ports) {
    if (p.port === 0) continue; // any free port: nothing to collide with
    const listener = await bindNamed(
      p,
      host,
      () => Deno.listen({ hostname: host, port: p.port }),
      "TCP",
      task,
    );
    listener.close();
  }
}

/**
 * For `deno task api` and `worker`: `ports` free at `host`, or the process says which is taken
 * (one line on stderr, no stack trace) and exits 1 before it writes anything.
 */
export async function exitIfPortsTaken(
  host: string,
  ports: RunPort[],
  task: "api" | "worker",
): Promise<void> {
  try {
    await checkPortsFree(host, ports, task);
  } catch (err) {
    if (!(err instanceof PortTaken)) throw err;
    console.error(err.message);
    Deno.exit(1);
  }
}
