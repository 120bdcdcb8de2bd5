// Catches what would otherwise kill this process: an unhandled promise rejection or an uncaught
// error in an event handler or timer. A fuzz run counts them (each is a property violation)
// and goes on instead of dying at the first one.

export interface Escape {
  kind: "unhandled" | "crash";
  detail: string;
}

const escapes: Escape[] = [];
let installed = false;

export function installGuard(): void {
  if (installed) return;
  installed = true;
  globalThis.addEventListener("unhandledrejection", (e) => {
    e.preventDefault();
    const r = e.reason as Error | undefined;
    escapes.push({ kind: "unhandled", detail: r?.stack ?? String(r) });
  });
  globalThis.addEventListener("error", (e) => {
    e.preventDefault();
    const r = e.error as Error | undefined;
    escapes.push({ kind: "crash", detail: r?.stack ?? String(e.message) });
  });
}

/** Everything that escaped since the last call. */
export function takeEscapes(): Escape[] {
  return escapes.splice(0);
}

/** Lets queued microtasks and due timers run, so their failures are seen before moving on. */
export function settle(ms = 0): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** This process's RSS, after a full GC when V8 exposes one (`--v8-flags=--expose-gc`). */
export function rss(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return Deno.memoryUsage().rss;
}
