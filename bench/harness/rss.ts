// A worker's memory over a window of calls: its resident set when the window opens, and the
// highest it reached, per process and for its process tree (a worker with runners is a tree).
import { processTree, resetPeak, statusKb } from "./proc.ts";
import { sum } from "./stats.ts";

export class RssPeak {
  /** The tree's processes when the window opened. */
  readonly pids: number[];
  /** VmRSS of each when the window opened, kB. */
  readonly idleKb: Map<number, number>;
  readonly idleSumKb: number;
  #hwm: boolean;
  #sampled: number;
  #timer?: ReturnType<typeof setInterval>;

  /** Reads the idle RSS, resets each process's VmHWM and samples the tree's sum every 100 ms. */
  constructor(rootPid: number) {
    this.pids = processTree(rootPid);
    this.idleKb = new Map(this.pids.map((p) => [p, statusKb(p, "VmRSS")]));
    this.idleSumKb = sum([...this.idleKb.values()]);
    this.#hwm = this.pids.every((p) => resetPeak(p));
    this.#sampled = this.idleSumKb;
    this.#timer = setInterval(() => {
      const now = sum(this.pids.map((p) => statusKb(p, "VmRSS")).filter(Number.isFinite));
      this.#sampled = Math.max(this.#sampled, now);
    }, 100);
  }

  /**
   * Stops sampling and gives the tree's peak, kB: VmHWM (exact) for a single process whose peak
   * could be reset; otherwise the highest sample of the sum (the processes' own peaks need not
   * coincide, so adding them would overstate it).
   */
  stop(): number {
    clearInterval(this.#timer);
    this.#timer = undefined;
    return this.pids.length === 1 && this.#hwm
      ? Math.max(this.#sampled, statusKb(this.pids[0], "VmHWM"))
      : this.#sampled;
  }

  /** One process's peak: VmHWM, or its RSS now where the kernel refused the reset. */
  peakOf(pid: number): number {
    return statusKb(pid, this.#hwm ? "VmHWM" : "VmRSS");
  }
}
