// A loopback TCP proxy that can be cut, to take the database away from a running API.
export interface Proxy {
  port: number;
  cut(): void;
}

export function tcpProxy(targetPort: number): Proxy {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const open = new Set<Deno.Conn>();
  (async () => {
    for await (const client of listener) {
      try {
        const server = await Deno.connect({ hostname: "127.0.0.1", port: targetPort });
        open.add(client).add(server);
        const pipe = (a: Deno.Conn, b: Deno.Conn) =>
          a.readable.pipeTo(b.writable).catch(() => {}).finally(() => {
            for (const c of [a, b]) {
              try {
                c.close();
              } catch { /* already closed */ }
              open.delete(c);
            }
          });
        pipe(client, server);
        pipe(server, client);
      } catch {
        client.close();
      }
    }
  })().catch(() => {});
  return {
    port: (listener.addr as Deno.NetAddr).port,
    cut() {
      listener.close();
      for (const c of open) {
        try {
          c.close();
        } catch { /* already closed */ }
      }
      open.clear();
    },
  };
}
