// A loopback TCP proxy whose connections can be stalled: from stall() on, no byte moves either
// way, yet both TCP connections stay open. That is a peer whose process hangs (its kernel still
// keeps the connection), or a path that black-holes traffic: no close, no reset, no error, just
// nothing.
export interface StallingProxy {
  port: number;
  stall(): void;
  close(): Promise<void>;
}

export function stallingProxy(targetPort: number): StallingProxy {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const open = new Set<Deno.Conn>();
  const pumps: Promise<void>[] = [];
  let stalled = false;
  let closing = () => {};
  const closed = new Promise<void>((r) => (closing = r));

  const pump = async (from: Deno.Conn, to: Deno.Conn) => {
    const buf = new Uint8Array(64 * 1024);
    try {
      for (;;) {
        const n = await from.read(buf);
        if (n === null) break;
        // Held, never passed on: a chunk read before the stall is the last one through.
        if (stalled) return await closed;
        let off = 0;
        while (off < n) off += await to.write(buf.subarray(off, n));
      }
    } catch { /* a side went away */ }
    for (const c of [from, to]) {
      try {
        c.close();
      } catch { /* closed already */ }
      open.delete(c);
    }
  };

  const accepting = (async () => {
    for await (const client of listener) {
      try {
        const server = await Deno.connect({ hostname: "127.0.0.1", port: targetPort });
        open.add(client).add(server);
        pumps.push(pump(client, server), pump(server, client));
      } catch {
        client.close();
      }
    }
  })().catch(() => {});

  return {
    port: (listener.addr as Deno.NetAddr).port,
    stall() {
      stalled = true;
    },
    async close() {
      try {
        listener.close();
      } catch { /* closed already */ }
      closing();
      for (const c of open) {
        try {
          c.close();
        } catch { /* closed already */ }
      }
      open.clear();
      await accepting;
      await Promise.all(pumps);
    },
  };
}
