// Counts the requests a server is answering, so a process that was told to stop can wait for
// them before it closes. Deno's `server.shutdown()` alone is not enough: a request whose body is
// still arriving loses it (`BadResource`) and is answered 500.
export type FetchHandler = (
  req: Request,
  info: Deno.ServeHandlerInfo,
) => Response | Promise<Response>;

export interface InFlight {
  /** `handler`, counting each request from arrival until its response is made. */
  fetch: FetchHandler;
  readonly count: number;
  /** Resolves once no request is in flight, or after `timeoutMs`; true when idle. */
  idle(timeoutMs: number): Promise<boolean>;
}

export function countInFlight(handler: FetchHandler): InFlight {
  let count = 0;
  const waiters: (() => void)[] = [];
  const settle = () => {
    if (count > 0) return;
    for (const w of waiters.splice(0)) w();
  };
  return {
    async fetch(req, info) {
      count++;
      try {
        return await handler(req, info);
      } finally {
        count--;
        settle();
      }
    },
    get count() {
      return count;
    },
    idle(timeoutMs) {
      if (count === 0) return Promise.resolve(true);
      return new Promise((resolve) => {
        const timer = setTimeout(() => resolve(false), timeoutMs);
        waiters.push(() => {
          clearTimeout(timer);
          resolve(true);
        });
      });
    },
  };
}
