// Refusals written to the log so the operator sees them, without letting a flood of refusals
// flood the log: at most one line a window (a second unless told) per source and kind of
// refusal, and at most `perWindow` lines a window in all; what was held back is counted into the
// next line (`suppressed`, or the field the owner names). Memory is bounded: sources are chosen
// by the sender, so at most `maxKeys` are remembered.
// Callers pass addresses, ports, reasons and usernames only: never a password, token or digest
// response (common/log.ts).
import type { Fields, Logger } from "./log.ts";

export interface RefusalLogOptions {
  /** The window lines are counted in (default 1,000 ms). */
  windowMs?: number;
  /** Lines a window over all sources (default 20). */
  perWindow?: number;
  /** Sources remembered (default 10,000; the least recently refused are forgotten first). */
  maxKeys?: number;
  /** The field a line counts what was held back before it in (default `suppressed`). */
  suppressedField?: string;
  now?: () => number;
}

export class RefusalLog {
  private readonly last = new Map<string, { at: number; suppressed: number }>();
  private windowStart = -Infinity;
  private inWindow = 0;
  private droppedGlobally = 0;
  /** Refusals not written, in all (for tests and metrics). */
  suppressed = 0;
  private readonly windowMs: number;
  private readonly perWindow: number;
  private readonly maxKeys: number;
  private readonly suppressedField: string;
  private readonly now: () => number;

  constructor(private readonly log: Logger, options: RefusalLogOptions = {}) {
    this.windowMs = options.windowMs ?? 1000;
    this.perWindow = options.perWindow ?? 20;
    this.maxKeys = options.maxKeys ?? 10_000;
    this.suppressedField = options.suppressedField ?? "suppressed";
    this.now = options.now ?? (() => performance.now());
  }

  /**
   * Logs `msg` for `source` unless a refusal of the same `kind` (default: the reason) from it was
   * logged in the last window.
   */
  refused(
    msg: string,
    source: string,
    reason: string,
    fields: Fields = {},
    kind: string = reason,
  ): boolean {
    const now = this.now();
    const key = `${source}|${kind}`;
    const seen = this.last.get(key);
    if (seen && now - seen.at < this.windowMs) {
      seen.suppressed++;
      this.suppressed++;
      return false;
    }
    if (now - this.windowStart >= this.windowMs) [this.windowStart, this.inWindow] = [now, 0];
    if (this.inWindow >= this.perWindow) {
      this.droppedGlobally++;
      this.suppressed++;
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
      ...(suppressed > 0 ? { [this.suppressedField]: suppressed } : {}),
    });
    return true;
  }
}
