// A bench's line into a worker's V8 (the worker runs with `--inspect=127.0.0.1:PORT`): heap
// censuses and settling (bench/media/heap_census.ts) and CPU profiles (bench/media/profile.ts).

/** A connection to a worker's inspector (Chrome DevTools Protocol) on `port`. */
export class Inspector {
  #id = 0;
  #pending = new Map<number, (result: Record<string, unknown>) => void>();
  /** Called with each event's params, by method name. */
  readonly onEvent = new Map<string, (params: Record<string, unknown>) => void>();

  private constructor(readonly ws: WebSocket) {
    ws.onmessage = (e) => {
      const msg = JSON.parse(e.data);
      if (msg.id !== undefined) this.#pending.get(msg.id)?.(msg.result ?? msg.error ?? {});
      else this.onEvent.get(msg.method)?.(msg.params);
    };
  }

  static async connect(port: number): Promise<Inspector> {
    const list = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
    const ws = new WebSocket(list[0].webSocketDebuggerUrl);
    await new Promise((resolve, reject) => {
      ws.onopen = resolve;
      ws.onerror = reject;
    });
    return new Inspector(ws);
  }

  call(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const id = ++this.#id;
    return new Promise((resolve) => {
      this.#pending.set(id, resolve);
      this.ws.send(JSON.stringify({ id, method, params }));
    });
  }

  close(): void {
    this.ws.close();
  }
}
