// A Python brain as a child process (Debian's python3, the SDK from sdk/python on PYTHONPATH),
// shaped as a servable brain so the call harness can point an agent at it like an in-process one.
import type { ServedBrain } from "../../sdk/brain/mod.ts";
import type { ServableBrain } from "./call_harness.ts";

export const PYTHON = "/usr/bin/python3";
const SDK_DIR = new URL("../../sdk/python/", import.meta.url).pathname;
export const PYTHON_EXAMPLE_BRAIN = `${SDK_DIR}example/brain.py`;

export interface PythonBrain extends ServableBrain {
  /** The URL the brain printed, e.g. `ws://127.0.0.1:41234/brain`. */
  readonly url: string;
  /** Everything the process printed so far (stdout and stderr). */
  output(): string;
  /** SIGTERM, then its exit status. */
  stop(): Promise<Deno.CommandStatus>;
}

/**
 * Starts `script` on a free port (BRAIN_PORT=0) and resolves once it printed
 * `brain listening on URL` (what `Brain.run` prints), or throws with its output after `ms`.
 * `serve()` ignores its options: the process chose its own port. `packages`, a folder put first
 * on PYTHONPATH, runs it on other releases than Debian's (tests/helpers/python_releases.ts).
 */
export async function startPythonBrain(
  script = PYTHON_EXAMPLE_BRAIN,
  ms = 15_000,
  packages?: string,
): Promise<PythonBrain> {
  const process = new Deno.Command(PYTHON, {
    args: [script],
    env: {
      PYTHONPATH: packages ? `${packages}:${SDK_DIR}` : SDK_DIR,
      PYTHONUNBUFFERED: "1",
      PYTHONDONTWRITEBYTECODE: "1",
      BRAIN_PORT: "0",
      HOST: "127.0.0.1",
    },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let text = "";
  const decoder = new TextDecoder();
  const collect = (s: ReadableStream<Uint8Array>) =>
    s.pipeTo(new WritableStream({ write: (c) => void (text += decoder.decode(c)) }));
  const done = Promise.all([collect(process.stdout), collect(process.stderr)]);
  const stop = async () => {
    try {
      process.kill("SIGTERM");
    } catch { /* already gone */ }
    const status = await process.status;
    await done;
    return status;
  };
  const until = Date.now() + ms;
  let url: string | undefined;
  while (!(url = text.match(/brain listening on (ws:\/\/\S+)/)?.[1])) {
    if (Date.now() > until) {
      await stop();
      throw new Error(`the Python brain never listened:\n${text}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const address = new URL(url);
  let stopped: Promise<Deno.CommandStatus> | undefined;
  const shutdown = () => (stopped ??= stop()).then(() => {});
  const served: ServedBrain = {
    url,
    hostname: address.hostname,
    port: Number(address.port),
    finished: process.status.then(() => {}),
    shutdown,
  };
  return {
    url,
    serve: () => served,
    output: () => text,
    stop: () => (stopped ??= stop()),
  };
}
