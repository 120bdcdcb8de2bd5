// Refusals written to the log so the operator sees them, without letting a flood of refusals
// flood the log: at most one line a second per source and reason, and at most `perSecond` lines
// a second in all; what was held back is counted into the next line (`suppressed`). Memory is
// bounded: sources are chosen by the sender, so at most `maxKeys` are remembered.
// Callers pass addresses, ports, reasons and usernames only: never a password, token or digest
// response (common/log.ts).
import type { Fields, Logger } from "./log.ts";

export interface RefusalLogOptions {
  /** Lines a second over all sources (default 20). */
  perSecond?: number;
  /** Sources remembered (default 10,000; the least recently refused are forgotten first). */
  maxKeys?: number;
  now?: () => number;
}

export class RefusalLog {
  private readonly last = new Map<string, { at: number; suppressed: number }>();
  private windowStart = -Infinity;
  private inWindow = 0;
  private droppedGlobally = 0;
  private readonly perSecond: number;
  private readonly maxKeys: number;
  private readonly now: () => number;

  constructor(private readonly log: Logger, options: RefusalLogOptions = {}) {
    this.perSecond = options.perSecond ?? 20;
    this.maxKeys = options.maxKeys ?? 10_000;
    this.now = options.now ?? (() => performance.now());
  }

  /** Logs `msg` for `source` and `reason` unless one like it was logged in the last second. */
  refused(msg: string, source: string, reason: string, fields: Fields = {}): boolean {
    const now = this.now();
    const key = `${source}|${reason}`;
    const seen = this.last.get(key);
    if (seen && now - seen.at < 1000) {
      seen.suppressed++;
      return false;
    }
    if (now - this.windowStart >= 1000) [this.windowStart, this.inWindow] = [now, 0];
    if (this.inWindow >= this.perSecond) {
      this.droppedGlobally++;
      return false;
    }
    this.inWindow++;
    const suppressed = (seen?.suppressed ?? 0) + this.droppedGlobally;
    this.droppedGlobally = 0;
    this.last.delete(key);
    this.last.set(key, { at: now, suppressed: 0 });
    if (this.last.size > this.maxKeys) this.last.delete(this.last.keys().next().value!);
    this.log.warn(msg, {
      source,
      reason,
      ...fields,
      ...(suppressed > 0 ? { suppressed } : {}),
    });
    return true;
  }
}
