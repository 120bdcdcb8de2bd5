// CPU time and memory from /proc for the benches: the clock tick, utime+stime of a process, a
// thread, a process tree or the machine, RSS, pinning to cores; and this process's CPU over a
// piece of work.

import process from "node:process";
import { eachThread } from "../../common/thread_name.ts";

/** Clock ticks per second of /proc's CPU times (getconf CLK_TCK; 100 where it cannot be read). */
export const CLK_TCK = await (async () => {
  try {
    const out = await new Deno.Command("getconf", { args: ["CLK_TCK"], stdout: "piped" }).output();
    return Number(new TextDecoder().decode(out.stdout).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** utime+stime in seconds from a /proc stat file (`/proc/PID/stat` or `/proc/PID/task/TID/stat`). */
export function statCpu(path: string): number {
  const stat = Deno.readTextFileSync(path);
  // Fields after "(comm)": state is field 3, utime 14, stime 15.
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) / CLK_TCK;
}

/** CPU seconds (user + system, all threads) a process has used so far. */
export function cpuSeconds(pid: number): number {
  return statCpu(`/proc/${pid}/stat`);
}

/** A numeric field of /proc/PID/status (VmRSS and VmHWM in kB, Threads); NaN where the process is gone. */
export function statusKb(pid: number, field: string): number {
  try {
    const m = Deno.readTextFileSync(`/proc/${pid}/status`).match(
      new RegExp(`^${field}:\\s+(\\d+)`, "m"),
    );
    return m ? Number(m[1]) : NaN;
  } catch {
    return NaN;
  }
}

/** Resets a process's VmHWM to its current RSS; false where the kernel refuses. */
export function resetPeak(pid: number): boolean {
  try {
    Deno.writeTextFileSync(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

/** The 1, 5 and 15 minute load averages, as /proc/loadavg gives them. */
export const loadAverage = () =>
  Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" ");

/** `pid` and every live descendant (children of children included), `pid` first. */
export function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${e.name}/stat`);
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(e.name));
      children.set(ppid, list);
    } catch { /* it exited */ }
  }
  const out: number[] = [];
  const visit = (p: number) => {
    out.push(p);
    for (const c of children.get(p) ?? []) visit(c);
  };
  visit(pid);
  return out;
}

/** Where a process's CPU went, by thread: seconds (or seconds per second, for a rate). */
export interface CpuSplit {
  /** All threads, exited ones included (/proc/PID/stat). */
  total: number;
  /** The main thread (TID = PID): the JavaScript event loop. */
  main: number;
  /** Threads named "recognition…" / "synthesis…" (common/thread_name.ts). */
  recognition: number;
  synthesis: number;
  /** The rest: V8 and tokio helpers, ONNX threads, and threads that exited in the window. */
  other: number;
}

/** One process's CPU at an instant: the whole process and each live thread. */
export interface ProcSnapshot {
  total: number;
  threads: Map<number, { name: string; cpu: number }>;
}

/** CPU of a process tree at an instant, per process. */
export interface TreeSnapshot {
  at: number;
  procs: Map<number, ProcSnapshot>;
}

/** The CPU of `rootPid`'s process tree, per process and thread, now. */
export function snapshotTree(rootPid: number): TreeSnapshot {
  const procs = new Map<number, ProcSnapshot>();
  for (const pid of processTree(rootPid)) {
    try {
      const threads = eachThread(pid, (dir) => ({
        name: Deno.readTextFileSync(`${dir}/comm`).trim(),
        cpu: statCpu(`${dir}/stat`),
      }));
      procs.set(pid, { total: statCpu(`/proc/${pid}/stat`), threads });
    } catch { /* the process exited */ }
  }
  return { at: performance.now(), procs };
}

export const zeroSplit = (): CpuSplit => ({
  total: 0,
  main: 0,
  recognition: 0,
  synthesis: 0,
  other: 0,
});

/** Each process alive at `b`: its CPU since `a` (zero at birth), whole and per live thread. */
function* processDeltas(a: TreeSnapshot, b: TreeSnapshot): Generator<{
  pid: number;
  total: number;
  threads: { tid: number; name: string; cpu: number }[];
}> {
  for (const [pid, pb] of b.procs) {
    const pa = a.procs.get(pid);
    const threads = [...pb.threads].map(([tid, t]) => ({
      tid,
      name: t.name,
      cpu: t.cpu - (pa?.threads.get(tid)?.cpu ?? 0),
    }));
    yield { pid, total: pb.total - (pa?.total ?? 0), threads };
  }
}

/**
 * CPU used between two snapshots, per process (those alive at `b`; one born in between counts
 * from zero). A thread's time is only attributed to its group while it is alive at `b`; the time of
 * threads that exited lands in `other`, since the process total keeps it.
 */
export function cpuBetween(a: TreeSnapshot, b: TreeSnapshot): Map<number, CpuSplit> {
  const out = new Map<number, CpuSplit>();
  for (const { pid, total, threads } of processDeltas(a, b)) {
    const s = zeroSplit();
    s.total = total;
    for (const t of threads) {
      if (t.tid === pid) s.main += t.cpu;
      else if (t.name.startsWith("recognition")) s.recognition += t.cpu;
      else if (t.name.startsWith("synthesis")) s.synthesis += t.cpu;
    }
    s.other = s.total - s.main - s.recognition - s.synthesis;
    out.set(pid, s);
  }
  return out;
}

/**
 * CPU used between two snapshots by thread name, over every process of the tree (threads alive at
 * `b`; V8's workers share names, so they add up). The time of threads that exited in between is
 * under "(exited)".
 */
export function cpuByThreadName(a: TreeSnapshot, b: TreeSnapshot): Map<string, number> {
  const out = new Map<string, number>();
  const add = (name: string, cpu: number) => out.set(name, (out.get(name) ?? 0) + cpu);
  for (const { pid, total, threads } of processDeltas(a, b)) {
    let named = 0;
    for (const t of threads) {
      add(t.tid === pid ? "(main)" : t.name, t.cpu);
      named += t.cpu;
    }
    add("(exited)", total - named);
  }
  return out;
}

/** Field-wise a + k·b. */
export function addSplit(a: CpuSplit, b: CpuSplit, k = 1): CpuSplit {
  return {
    total: a.total + k * b.total,
    main: a.main + k * b.main,
    recognition: a.recognition + k * b.recognition,
    synthesis: a.synthesis + k * b.synthesis,
    other: a.other + k * b.other,
  };
}

/** The sum over every process of a tree. */
export function sumSplits(splits: Iterable<CpuSplit>): CpuSplit {
  let s = zeroSplit();
  for (const x of splits) s = addSplit(s, x);
  return s;
}

/**
 * Binds every thread of `pid` (and what it starts later) to the CPUs `cpus` ("0", "1-3"), with
 * taskset; false where taskset is missing or fails. For BENCH_*_PIN: the worker gets a core of
 * its own, as on a media node, instead of competing with the bench's callers.
 */
export function pinTo(pid: number, cpus: string): boolean {
  try {
    const out = new Deno.Command("taskset", {
      args: ["-a", "-p", "-c", cpus, String(pid)],
      stdout: "null",
      stderr: "null",
    }).outputSync();
    return out.success;
  } catch {
    return false;
  }
}

/** BENCH_*_PIN's split on this machine: the worker on CPU 0, everything of the bench on the rest. */
export function pinSplit(): { worker: string; bench: string } | null {
  const n = navigator.hardwareConcurrency;
  return n >= 2 ? { worker: "0", bench: n === 2 ? "1" : `1-${n - 1}` } : null;
}

/** Busy (all but idle and iowait), total and steal ticks of the whole machine (/proc/stat). */
export function machineTicks(): { busy: number; total: number; steal: number } {
  const f = Deno.readTextFileSync("/proc/stat").split("\n")[0].trim().split(/\s+/).slice(1)
    .map(Number);
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busy: total - f[3] - f[4], total, steal: f[7] };
}

/** CPU seconds of `pid` and its descendants alive now. */
export const treeCpuSeconds = (pid: number): number =>
  processTree(pid).reduce((s, p) => {
    try {
      return s + cpuSeconds(p);
    } catch {
      return s; // it exited
    }
  }, 0);

/** This process's CPU (user + system, all threads) while `run` runs, in ms. */
export function cpuMsOf(run: () => void): number {
  const before = process.cpuUsage();
  run();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}
