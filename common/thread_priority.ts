// Lowers the calling OS thread's scheduling priority (raises its nice value), so that on a busy
// core the media thread, which must send every call's next 20 ms frame on time, runs before the
// engines' threads (recognition, synthesis), whose work can finish a little later without anyone
// hearing a gap. Linux only: nice is per thread there (setpriority on the thread's own id).

/**
 * The engines' threads' nice value: against a busy nice-0 thread they get about a quarter of the
 * core (CFS weights 335 : 1024). Nice 10 (a tenth) starved recognition behind the callers on a
 * shared machine (bench/media/README.md).
 */
export const ENGINE_THREAD_NICE = 5;

import { eachThread } from "./thread_name.ts";

const PRIO_PROCESS = 0;

let libc:
  | Deno.DynamicLibrary<{
    gettid: { parameters: []; result: "i32" };
    setpriority: { parameters: ["i32", "u32", "i32"]; result: "i32" };
  }>
  | null
  | undefined;

function open() {
  if (libc !== undefined) return libc;
  try {
    libc = Deno.dlopen("libc.so.6", {
      gettid: { parameters: [], result: "i32" },
      setpriority: { parameters: ["i32", "u32", "i32"], result: "i32" },
    });
  } catch {
    libc = null; // not glibc Linux, or no FFI permission
  }
  return libc;
}

/**
 * Sets this thread's nice value (raising it needs no privilege); returns false where the
 * platform does not allow it, in which case the thread keeps its priority.
 */
export function niceThisThread(nice = ENGINE_THREAD_NICE): boolean {
  const c = open();
  if (!c) return false;
  return c.symbols.setpriority(PRIO_PROCESS, c.symbols.gettid(), nice) === 0;
}

/** This process's threads' nice values by thread id (Linux; field 19 of /proc/.../stat). */
export function threadNiceValues(pid = Deno.pid): Map<number, number> {
  return eachThread(pid, (dir) => {
    const stat = Deno.readTextFileSync(`${dir}/stat`);
    // Fields after the parenthesised name: state is field 3, nice field 19.
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19 - 3]);
  });
}
