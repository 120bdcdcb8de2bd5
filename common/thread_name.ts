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

/**
 * `read(dir)` for every thread of a process (Linux; `dir` is `/proc/PID/task/TID`), by thread id.
 * A thread that exits while it is read is left out; an empty map where there is no /proc.
 */
export function eachThread<T>(pid: number, read: (dir: string) => T): Map<number, T> {
  const out = new Map<number, T>();
  try {
    for (const t of Deno.readDirSync(`/proc/${pid}/task`)) {
      try {
        out.set(Number(t.name), read(`/proc/${pid}/task/${t.name}`));
      } catch {
        // the thread exited between the listing and the read
      }
    }
  } catch {
    // not Linux, or the process is gone
  }
  return out;
}

/** Thread id → name for a process (Linux), e.g. to split its CPU time by thread. */
export function threadNames(pid = Deno.pid): Map<number, string> {
  return eachThread(pid, (dir) => Deno.readTextFileSync(`${dir}/comm`).trim());
}
