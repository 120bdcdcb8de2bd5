// A host loaded on purpose: processes that only spin on the CPU, for tests and benches of what a
// call does when the worker shares its cores (issue 31: barge-in on a busy node).

export interface BusyLoops {
  /** Kills every loop and waits for it to be gone. */
  stop(): Promise<void>;
}

/** `n` shell loops (`while :; do :; done`), each a process of its own, spinning until stopped. */
export function busyLoops(n = 2): BusyLoops {
  const loops = Array.from({ length: n }, () =>
    new Deno.Command("sh", {
      args: ["-c", "while :; do :; done"],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn());
  return {
    async stop() {
      for (const loop of loops) {
        try {
          loop.kill("SIGKILL");
        } catch { /* already gone */ }
        await loop.status;
      }
    },
  };
}
