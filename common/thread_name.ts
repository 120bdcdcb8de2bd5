// Names the calling OS thread (as `top -H`, `ps -L` and /proc/PID/task/TID/comm show it), so
// operators and benchmarks can tell the worker's recognition and synthesis threads apart: Deno
// names every Worker thread "worker-N" in creation order.

/** Linux keeps at most 15 bytes of a thread's name. */
const MAX_NAME = 15;

/** Sets this thread's name; returns false where the platform does not allow it (not Linux). */
export function nameThisThread(name: string): boolean {
  try {
    Deno.writeTextFileSync("/proc/thread-self/comm", name.slice(0, MAX_NAME));
    return true;
  } catch {
    return false;
  }
}

/** Thread id → name for a process (Linux), e.g. to split its CPU time by thread. */
export function threadNames(pid = Deno.pid): Map<number, string> {
  const names = new Map<number, string>();
  try {
    for (const t of Deno.readDirSync(`/proc/${pid}/task`)) {
      try {
        names.set(Number(t.name), Deno.readTextFileSync(`/proc/${pid}/task/${t.name}/comm`).trim());
      } catch {
        // the thread exited between the listing and the read
      }
    }
  } catch {
    // not Linux, or the process is gone
  }
  return names;
}
