// Graceful drain of a worker node: once the node is marked draining (no new calls are placed on
// it), the calls in flight go on until they end by themselves or the drain timeout passes; the
// ones still running then end with reason `worker_shutdown`. Calls that arrive during the drain
// (sessions reserved here just before it began) are waited for too, under the same deadline.

/** What the drain needs of a call. */
export interface DrainableCall {
  readonly ended: Promise<void>;
  end(status: "ended", reason: "worker_shutdown"): Promise<void>;
}

export interface DrainResult {
  /** Calls that ended by themselves during the drain. */
  endedByThemselves: number;
  /** Calls still running at the deadline, ended with `worker_shutdown`. */
  endedAtDeadline: number;
  waitedMs: number;
}

/**
 * Waits until `calls` is empty or `timeoutMs` has passed, then ends what is left. `calls` is the
 * node's live map (calls remove themselves when they end); `abort` ends the wait early (a second
 * signal from an impatient operator).
 */
export async function drainCalls(
  calls: Map<string, DrainableCall>,
  timeoutMs: number,
  abort?: AbortSignal,
): Promise<DrainResult> {
  const started = performance.now();
  const deadline = started + timeoutMs;
  const seen = new Set<DrainableCall>();
  const note = () => calls.forEach((c) => seen.add(c));
  note();
  while (calls.size > 0 && performance.now() < deadline && !abort?.aborted) {
    const left = deadline - performance.now();
    let timer: ReturnType<typeof setTimeout> | undefined;
    // Wakes at least every 250 ms to notice calls that arrived since.
    await Promise.race([
      Promise.all([...calls.values()].map((c) => c.ended)),
      new Promise<void>((r) => (timer = setTimeout(r, Math.min(left, 250)))),
      new Promise<void>((r) => abort?.addEventListener("abort", () => r(), { once: true })),
    ]);
    clearTimeout(timer);
    note();
  }
  const remaining = [...calls.values()];
  await Promise.all(remaining.map((c) => c.end("ended", "worker_shutdown")));
  return {
    endedByThemselves: seen.size - remaining.length,
    endedAtDeadline: remaining.length,
    waitedMs: Math.round(performance.now() - started),
  };
}
