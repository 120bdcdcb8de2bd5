// CPU time from /proc for the media benches: the clock tick, and utime+stime of a process or a
// thread.

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
