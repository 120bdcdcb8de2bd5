// The worker's SIP refusals, as the operator sees them: one log line per source address, method,
// status and reason per 10 s window, with how many were left out since the last line. Sources are
// whoever sends UDP (spoofable), so memory and lines are bounded (common/refusal_log.ts, which
// does the counting): at most MAX_KEYS sources are remembered (the oldest forgotten first) and at
// most LINES_PER_WINDOW lines are written per window in all.
import type { Logger } from "../../common/log.ts";
import { RefusalLog as Limited } from "../../common/refusal_log.ts";
import type { Peer } from "../../sip/udp.ts";

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
  readonly #lines: Limited;

  constructor(log: Logger, windowMs = 10_000, now = () => performance.now()) {
    this.#lines = new Limited(log, {
      windowMs,
      perWindow: LINES_PER_WINDOW,
      maxKeys: MAX_KEYS,
      suppressedField: "left_out_since_last",
      now,
    });
  }

  /** Refusals not written (for tests and the metrics). */
  get suppressed(): number {
    return this.#lines.suppressed;
  }

  refused(r: Refusal): void {
    this.#lines.refused("SIP request refused", r.source.address, r.reason, {
      method: r.method,
      status: r.status,
      port: r.source.port,
      transport: r.transport,
    }, `${r.method}|${r.status}|${r.reason}`);
  }
}
