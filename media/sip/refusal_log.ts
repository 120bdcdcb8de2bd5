// The worker's SIP refusals, as the operator sees them: one log line per source address, method and
// reason per window, with how many were left out since the last line. Sources are whoever sends
// UDP (spoofable), so memory and lines are bounded: at most MAX_KEYS sources are remembered (the
// oldest forgotten first) and at most LINES_PER_WINDOW lines are written per window in all.
import type { Logger } from "../../common/log.ts";
import type { Peer } from "./udp.ts";

const MAX_KEYS = 1024;
const LINES_PER_WINDOW = 20;

export interface Refusal {
  method: string;
  status: number;
  reason: string;
  source: Peer;
  transport: "UDP" | "TCP";
}

export class RefusalLog {
  /** By source address and reason: when its last line was written and what was left out since. */
  #keys = new Map<string, { at: number; left: number }>();
  #windowAt = -Infinity;
  #lines = 0;
  /** Refusals not written (for tests and the metrics). */
  suppressed = 0;

  constructor(
    private readonly log: Logger,
    private readonly windowMs = 10_000,
    private readonly now = () => performance.now(),
  ) {}

  refused(r: Refusal): void {
    const now = this.now();
    if (now - this.#windowAt >= this.windowMs) [this.#windowAt, this.#lines] = [now, 0];
    const key = `${r.source.address}|${r.method}|${r.status}|${r.reason}`;
    const seen = this.#keys.get(key);
    if ((seen && now - seen.at < this.windowMs) || this.#lines >= LINES_PER_WINDOW) {
      if (seen) seen.left++;
      this.suppressed++;
      return;
    }
    this.#keys.delete(key);
    this.#keys.set(key, { at: now, left: 0 });
    if (this.#keys.size > MAX_KEYS) this.#keys.delete(this.#keys.keys().next().value!);
    this.#lines++;
    this.log.warn("SIP request refused", {
      method: r.method,
      status: r.status,
      reason: r.reason,
      source: r.source.address,
      port: r.source.port,
      transport: r.transport,
      left_out_since_last: seen?.left || undefined,
    });
  }
}
